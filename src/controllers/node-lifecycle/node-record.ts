// The node lifecycle controller's record on a Node for `setpoint why` (docs/why-records.md): the Ready
// condition it saw against how long the node has been silent (its heartbeat and Lease), the taints it put on
// or took off, the pods the NoExecute taints evict, and what it waits for. Pure: built from one reconcile.
import type { LoopReport } from '../../client/reconcile-recorder.js';
import type { NodeTaint } from './node-types.js';

export interface NodeReconcileFacts {
  /** The Ready status after the reconcile (undefined: never posted). */
  readonly ready: string | undefined;
  readonly readyReason?: string;
  readonly readyMessage?: string;
  /** How long, on the controller's clock, neither the heartbeat nor the Lease moved. */
  readonly silentForMs: number;
  readonly graceMs: number;
  /** Wall-clock age of the Lease's renewTime, when it has one. */
  readonly leaseAgeMs: number | undefined;
  readonly markedUnknown: boolean;
  readonly taintsBefore: readonly NodeTaint[];
  readonly taintsAfter: readonly NodeTaint[];
  /** Pods on the node the NoExecute taints just added evict now, later (tolerationSeconds) and never. */
  readonly eviction: { readonly now: number; readonly later: number; readonly never: number } | undefined;
  readonly podsMarkedNotReady: number;
  /** Set when --node-eviction-rate held the NoExecute taint back: when the next token comes. */
  readonly heldBackMs: number | undefined;
}

const taintText = (t: NodeTaint): string => `${t.key}:${t.effect}`;
const seconds = (ms: number): number => Math.round(ms / 1000);

function diff(a: readonly NodeTaint[], b: readonly NodeTaint[]): string[] {
  const inB = new Set(b.map(taintText));
  return a.map(taintText).filter((t) => !inB.has(t));
}

export function nodeLoopReport(f: NodeReconcileFacts, uid: string | undefined): LoopReport {
  const added = diff(f.taintsAfter, f.taintsBefore);
  const removed = diff(f.taintsBefore, f.taintsAfter);
  const actions: string[] = [];
  if (f.markedUnknown) actions.push('mark Ready=Unknown');
  if (added.length > 0) actions.push(`taint ${added.join(', ')}`);
  if (removed.length > 0) actions.push(`untaint ${removed.join(', ')}`);
  if (f.eviction !== undefined && f.eviction.now + f.eviction.later > 0) {
    actions.push(`evict ${f.eviction.now + f.eviction.later} pods${f.eviction.later > 0 ? ` (${f.eviction.later} after their tolerationSeconds)` : ''}`);
  }
  if (f.podsMarkedNotReady > 0) actions.push(`mark ${f.podsMarkedNotReady} pods not ready`);
  const actual: Record<string, unknown> = { ready: f.ready ?? 'none', silentForSeconds: seconds(f.silentForMs) };
  if (f.leaseAgeMs !== undefined) actual['leaseAgeSeconds'] = seconds(f.leaseAgeMs);
  actual['taints'] = f.taintsAfter.map(taintText);
  const gap = { desired: { ready: 'True', silentForSeconds: `<${seconds(f.graceMs)}` }, actual };
  const condition = f.ready === undefined ? 'no Ready condition' : `Ready=${f.ready}${f.readyReason ? ` (${f.readyReason}${f.readyMessage ? `: ${f.readyMessage}` : ''})` : ''}`;
  const base = { gap, action: actions.length > 0 ? actions.join(', ') : 'none', ...(uid !== undefined ? { uid } : {}) };
  if (f.heldBackMs !== undefined) {
    return { ...base, outcome: 'waiting', message: `rate-limited eviction: the NoExecute taint is held back by --node-eviction-rate (next token in ${Math.max(1, seconds(f.heldBackMs))}s); ${condition}` };
  }
  if (f.ready !== 'True') return { ...base, outcome: 'waiting', message: `waiting for the node to report Ready: ${condition}` };
  return { ...base, outcome: 'ok' };
}
