// Which pods a ReplicaSet deletes first when it scales down (k/k controller.ActivePodsWithRanks with
// LogarithmicScaleDown, on by default): unscheduled before scheduled, Pending before Unknown before
// Running, not ready before ready, lower controller.kubernetes.io/pod-deletion-cost first, pods on
// nodes crowded with related pods first, then recently ready, more restarts, and newer pods — the
// times compared in powers of two so pods of about the same age fall to the other rules.
import type { Pod } from '../apps-types.js';
import { isPodReady, readyCondition } from '../pod-readiness.js';

export const POD_DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';

export interface RankedPod {
  readonly pod: Pod;
  /** How many related active pods share its node. */
  readonly rank: number;
}

function phaseOrder(p: Pod): number {
  switch (p.status?.phase) {
    case 'Pending':
      return 0;
    case 'Unknown':
      return 1;
    case 'Running':
      return 2;
    default:
      return 0;
  }
}

function deletionCost(p: Pod): number {
  const v = p.metadata.annotations?.[POD_DELETION_COST];
  if (v === undefined || !/^[+-]?\d+$/.test(v)) return 0;
  return Number(v);
}

function restarts(p: Pod): number {
  return Math.max(0, ...(p.status?.containerStatuses ?? []).map((c) => c.restartCount ?? 0));
}

/** Go's int(log2(seconds since t)), the bucket LogarithmicScaleDown compares; t missing sorts as the newest. */
function logBucket(t: string | undefined, nowMs: number): number {
  const ms = t ? Date.parse(t) : NaN;
  if (!Number.isFinite(ms)) return -Infinity;
  const secs = Math.max(0, (nowMs - ms) / 1000);
  return secs < 1 ? 0 : Math.floor(Math.log2(secs));
}

/** Negative when a should be deleted before b. */
export function compareForDeletion(a: RankedPod, b: RankedPod, nowMs: number): number {
  const pa = a.pod;
  const pb = b.pod;
  const na = pa.spec?.nodeName ?? '';
  const nb = pb.spec?.nodeName ?? '';
  if ((na === '') !== (nb === '')) return na === '' ? -1 : 1;
  if (phaseOrder(pa) !== phaseOrder(pb)) return phaseOrder(pa) - phaseOrder(pb);
  if (isPodReady(pa) !== isPodReady(pb)) return isPodReady(pa) ? 1 : -1;
  if (deletionCost(pa) !== deletionCost(pb)) return deletionCost(pa) - deletionCost(pb);
  if (a.rank !== b.rank) return b.rank - a.rank;
  if (isPodReady(pa) && isPodReady(pb)) {
    const ra = logBucket(readyCondition(pa)?.lastTransitionTime, nowMs);
    const rb = logBucket(readyCondition(pb)?.lastTransitionTime, nowMs);
    if (ra !== rb) return ra - rb;
  }
  if (restarts(pa) !== restarts(pb)) return restarts(pb) - restarts(pa);
  const ca = logBucket(pa.metadata.creationTimestamp, nowMs);
  const cb = logBucket(pb.metadata.creationTimestamp, nowMs);
  return ca - cb;
}

/**
 * getPodsToDelete: the `diff` pods to delete first among `filtered`, ranked by how many of `related`
 * (the pods of every ReplicaSet of the same Deployment, these included) share each pod's node.
 */
export function podsToDelete(filtered: readonly Pod[], related: readonly Pod[], diff: number, nowMs: number): Pod[] {
  if (diff >= filtered.length) return [...filtered];
  const onNode = new Map<string, number>();
  for (const p of related) {
    const n = p.spec?.nodeName ?? '';
    if (n !== '') onNode.set(n, (onNode.get(n) ?? 0) + 1);
  }
  const ranked: RankedPod[] = filtered.map((pod) => ({ pod, rank: onNode.get(pod.spec?.nodeName ?? '') ?? 0 }));
  ranked.sort((a, b) => compareForDeletion(a, b, nowMs));
  return ranked.slice(0, diff).map((r) => r.pod);
}
