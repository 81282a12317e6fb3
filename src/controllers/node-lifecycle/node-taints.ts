// The taints a node's Ready condition calls for (Kubernetes' doNoScheduleTaintingPass and
// doNoExecuteTaintingPass): Ready=False → node.kubernetes.io/not-ready, Ready=Unknown →
// node.kubernetes.io/unreachable, each as NoSchedule and as NoExecute (with timeAdded), Ready=True → neither;
// spec.unschedulable → node.kubernetes.io/unschedulable:NoSchedule. Taints set by anyone else are kept.
import { findCondition } from '../status-conditions.js';
import { TAINT_NOT_READY, TAINT_UNREACHABLE, TAINT_UNSCHEDULABLE, type NodeObject, type NodeTaint } from './node-types.js';

const OURS = new Set([TAINT_NOT_READY, TAINT_UNREACHABLE, TAINT_UNSCHEDULABLE]);
const same = (a: NodeTaint, b: NodeTaint): boolean => a.key === b.key && a.effect === b.effect;

export function desiredTaints(node: NodeObject, nowRfc3339: string): NodeTaint[] {
  const current = node.spec?.taints ?? [];
  const ready = findCondition(node.status?.conditions, 'Ready')?.status;
  const want: NodeTaint[] = [];
  const key = ready === 'False' ? TAINT_NOT_READY : ready === 'Unknown' ? TAINT_UNREACHABLE : undefined;
  if (key !== undefined) want.push({ key, effect: 'NoSchedule' }, { key, effect: 'NoExecute', timeAdded: nowRfc3339 });
  if (node.spec?.unschedulable === true) want.push({ key: TAINT_UNSCHEDULABLE, effect: 'NoSchedule' });
  const kept = current.filter((t) => !OURS.has(t.key) || want.some((w) => same(w, t)));
  for (const w of want) if (!kept.some((t) => same(t, w))) kept.push(w);
  return kept;
}

export function sameTaints(a: readonly NodeTaint[] | undefined, b: readonly NodeTaint[] | undefined): boolean {
  return JSON.stringify(a ?? []) === JSON.stringify(b ?? []);
}

export function noExecuteTaints(node: NodeObject | undefined): NodeTaint[] {
  return (node?.spec?.taints ?? []).filter((t) => t.effect === 'NoExecute');
}

/** Whether going from `current` to `next` puts a NoExecute taint of ours on a node that had none (rate-limited). */
export function startsNoExecute(current: readonly NodeTaint[] | undefined, next: readonly NodeTaint[]): boolean {
  const ours = (l: readonly NodeTaint[]): boolean => l.some((t) => t.effect === 'NoExecute' && OURS.has(t.key));
  return ours(next) && !ours(current ?? []);
}

/** `next` without the NoExecute taints of ours (while the eviction rate holds them back). */
export function withoutNoExecute(next: readonly NodeTaint[]): NodeTaint[] {
  return next.filter((t) => !(t.effect === 'NoExecute' && OURS.has(t.key)));
}
