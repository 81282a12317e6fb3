// One scheduling attempt (Kubernetes' schedulePod): PreFilter, Filter from a round-robin start until
// enough feasible nodes are found (percentageOfNodesToScore), PreScore and Score, then the best node
// (ties broken by an injected random source, so tests replay). A pod that fits nowhere gets a FitError
// with the per-node statuses and the preemption message. Pure and synchronous: the cache, queue and
// binding are the caller's.

import { CycleState } from './framework.js';
import { FitError, newDiagnosis, noNodesAvailableMsg } from './fit-error.js';
import type { Diagnosis } from './fit-error.js';
import type { NodeInfo } from './node-info.js';
import { numFeasibleNodesToFind } from './num-feasible-nodes.js';
import type { PodInfo } from './pod-info.js';
import { preempt } from './preemption.js';
import type { PreemptionOutcome } from './preemption.js';
import type { Profile } from './profile.js';
import type { Snapshot } from './snapshot.js';
import type { Status } from './status.js';

export interface ScheduleResult {
  readonly nodeName: string;
  /** Nodes filtered (feasible or not) this cycle. */
  readonly evaluatedNodes: number;
  readonly feasibleNodes: number;
  readonly state: CycleState;
}

export class NoNodesAvailableError extends Error {
  readonly code = 'SCHEDULER_NO_NODES';
  constructor() {
    super(noNodesAvailableMsg);
  }
}

/** A failed attempt: the FitError, and what preemption found (a nominated node and its victims). */
export interface ScheduleFailure {
  readonly error: FitError;
  readonly preemption?: PreemptionOutcome;
}

export class ScheduleAlgorithm {
  /** Where the next cycle starts filtering, so successive pods spread over all nodes. */
  nextStartNodeIndex = 0;

  constructor(
    readonly profile: Profile,
    /** A uniform integer in [0, n): the tie breaker among equally good nodes. */
    private readonly randInt: (n: number) => number,
    private readonly preemption = true,
  ) {}

  schedule(pod: PodInfo, snapshot: Snapshot): ScheduleResult | ScheduleFailure {
    if (snapshot.numNodes === 0) throw new NoNodesAvailableError();
    const state = new CycleState();
    const diagnosis = newDiagnosis();
    const feasible = this.findNodesThatFit(state, pod, snapshot, diagnosis);
    if (feasible.length === 0) {
      const error = new FitError(pod.key, snapshot.numNodes, diagnosis);
      if (!this.preemption) return { error };
      const outcome = preempt(this.profile, pod, snapshot, diagnosis.nodeToStatus);
      diagnosis.postFilterMsg = outcome.message;
      return { error, preemption: outcome };
    }
    const evaluatedNodes = feasible.length + diagnosis.nodeToStatus.size;
    if (feasible.length === 1) return { nodeName: (feasible[0] as NodeInfo).name, evaluatedNodes, feasibleNodes: 1, state };
    const st = this.profile.runPreScore(state, pod, feasible, snapshot);
    if (st !== null) throw new Error(`PreScore ${st.plugin}: ${st.message()}`);
    const totals = this.profile.runScore(state, pod, feasible);
    return { nodeName: this.selectHost(feasible, totals), evaluatedNodes, feasibleNodes: feasible.length, state };
  }

  private findNodesThatFit(state: CycleState, pod: PodInfo, snapshot: Snapshot, diagnosis: Diagnosis): NodeInfo[] {
    const pre = this.profile.runPreFilter(state, pod, snapshot);
    if (pre.status !== null) {
      // A PreFilter rejection applies to every node; the message says it once.
      diagnosis.preFilterMsg = pre.status.message();
      if (pre.status.isUnschedulable()) diagnosis.unschedulablePlugins.add(pre.status.plugin);
      for (const n of snapshot.list) diagnosis.nodeToStatus.set(n.name, pre.status);
      return [];
    }
    let nodes = snapshot.list;
    if (pre.nodeNames !== undefined) nodes = nodes.filter((n) => pre.nodeNames?.has(n.name));
    const all = nodes.length;
    if (all === 0) return [];
    const want = numFeasibleNodesToFind(this.profile.percentageOfNodesToScore, all);
    const feasible: NodeInfo[] = [];
    const start = this.nextStartNodeIndex % all;
    let processed = 0;
    for (let i = 0; i < all && feasible.length < want; i++) {
      const n = nodes[(start + i) % all] as NodeInfo;
      processed++;
      const st: Status | null = this.profile.runFilter(state, pod, n);
      if (st === null) {
        feasible.push(n);
      } else {
        diagnosis.nodeToStatus.set(n.name, st);
        if (st.isUnschedulable()) diagnosis.unschedulablePlugins.add(st.plugin);
      }
    }
    this.nextStartNodeIndex = (start + processed) % all;
    return feasible;
  }

  // selectHost: the highest total, a uniformly random one among equals (reservoir sampling).
  private selectHost(nodes: readonly NodeInfo[], totals: readonly number[]): string {
    let best = 0;
    let ties = 1;
    for (let i = 1; i < nodes.length; i++) {
      const s = totals[i] as number;
      const b = totals[best] as number;
      if (s > b) {
        best = i;
        ties = 1;
      } else if (s === b) {
        ties++;
        if (this.randInt(ties) === 0) best = i;
      }
    }
    return (nodes[best] as NodeInfo).name;
  }
}

export function isFailure(r: ScheduleResult | ScheduleFailure): r is ScheduleFailure {
  return 'error' in r;
}
