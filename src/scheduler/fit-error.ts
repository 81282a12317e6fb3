// FitError: why a pod fits no node, in Kubernetes' exact words. The message is
// "0/N nodes are available: " + the sorted "count reason" histogram + ".", then the PostFilter's
// (preemption's) message, e.g.
//   0/3 nodes are available: 1 node(s) had untolerated taint {k: v}, 2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.

import type { Status } from './status.js';

export interface Diagnosis {
  /** The status of every node that was rejected, by name (the first rejecting plugin's). */
  readonly nodeToStatus: Map<string, Status>;
  /** A status for the nodes absent from the map (preemption's "not helpful"). */
  absentStatus?: Status;
  /** The plugins that rejected the pod somewhere: the queue moves it back on their events. */
  readonly unschedulablePlugins: Set<string>;
  preFilterMsg: string;
  postFilterMsg: string;
}

export function newDiagnosis(): Diagnosis {
  return { nodeToStatus: new Map(), unschedulablePlugins: new Set(), preFilterMsg: '', postFilterMsg: '' };
}

/** The reason histogram of a diagnosis: reason → how many nodes gave it. */
export function reasonHistogram(d: Diagnosis, numAllNodes: number): Map<string, number> {
  const reasons = new Map<string, number>();
  for (const st of d.nodeToStatus.values()) for (const r of st.reasons) reasons.set(r, (reasons.get(r) ?? 0) + 1);
  if (d.absentStatus !== undefined && d.nodeToStatus.size < numAllNodes) {
    for (const r of d.absentStatus.reasons) reasons.set(r, (reasons.get(r) ?? 0) + numAllNodes - d.nodeToStatus.size);
  }
  return reasons;
}

export function fitErrorMessage(numAllNodes: number, d: Diagnosis): string {
  let msg = `0/${numAllNodes} nodes are available:`;
  if (d.preFilterMsg !== '') {
    msg += ` ${d.preFilterMsg}.`;
  } else {
    // Go's sort.Strings over "count reason": byte order, counts included.
    const items = [...reasonHistogram(d, numAllNodes)].map(([r, n]) => `${n} ${r}`).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    if (items.length > 0) msg += ` ${items.join(', ')}.`;
  }
  // Kubernetes 1.32's preemption message already ends its own sentence; no second period (older
  // releases printed "..").
  if (d.postFilterMsg !== '') msg += d.postFilterMsg.endsWith('.') ? ` ${d.postFilterMsg}` : ` ${d.postFilterMsg}.`;
  return msg;
}

/** ErrNoNodesAvailable's message. */
export const noNodesAvailableMsg = 'no nodes available to schedule pods';

export class FitError extends Error {
  readonly code = 'SCHEDULER_FIT_ERROR';

  constructor(
    readonly podKey: string,
    readonly numAllNodes: number,
    readonly diagnosis: Diagnosis,
  ) {
    // No message argument: Error would define an own property over the getter below.
    super();
    this.name = 'FitError';
  }

  // Computed on demand: the PostFilter message is added after the error is made.
  override get message(): string {
    return fitErrorMessage(this.numAllNodes, this.diagnosis);
  }
}
