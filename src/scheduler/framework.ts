// The scheduling framework's extension points, as Kubernetes defines them (PreFilter, Filter,
// PostFilter, PreScore, Score with NormalizeScore, Reserve/Unreserve; Bind lives in the glue, being
// I/O), and the per-cycle state plugins share. A plugin implements the points it needs; a profile lists
// plugins with their score weights.

import type { ClusterEvent } from './cluster-event.js';
import type { NodeInfo } from './node-info.js';
import type { PodInfo } from './pod-info.js';
import type { Snapshot } from './snapshot.js';
import type { Status } from './status.js';

/** framework.MaxNodeScore: every Score plugin's normalized range is 0..100. */
export const maxNodeScore = 100;

/** Per-cycle state: each plugin's PreFilter/PreScore results, and which plugins skip this pod. */
export class CycleState {
  private readonly data = new Map<string, unknown>();
  readonly skipFilter = new Set<string>();
  readonly skipScore = new Set<string>();

  read<T>(key: string): T | undefined {
    return this.data.get(key) as T | undefined;
  }

  write(key: string, v: unknown): void {
    this.data.set(key, v);
  }

  clone(): CycleState {
    const c = new CycleState();
    for (const [k, v] of this.data) c.data.set(k, v);
    for (const s of this.skipFilter) c.skipFilter.add(s);
    for (const s of this.skipScore) c.skipScore.add(s);
    return c;
  }
}

export interface Plugin {
  readonly name: string;
  /** EnqueueExtensions.EventsToRegister: the cluster events that could make a pod this plugin rejected fit. */
  events?(): readonly ClusterEvent[];
}

/** A PreFilter may narrow the candidate nodes (NodeName, affinity on metadata.name). */
export interface PreFilterResult {
  readonly nodeNames?: ReadonlySet<string>;
}

export interface PreFilterPlugin extends Plugin {
  /** null or a Skip status to go on; an unschedulable status fails the cycle for every node. */
  preFilter(state: CycleState, pod: PodInfo, snapshot: Snapshot): Status | PreFilterResult | null;
}

export interface FilterPlugin extends Plugin {
  filter(state: CycleState, pod: PodInfo, node: NodeInfo): Status | null;
}

export interface PostFilterResult {
  readonly nominatedNodeName?: string;
  /** Pods the scheduler must delete for the nominated node to fit the preemptor. */
  readonly victims?: readonly PodInfo[];
}

export interface PostFilterPlugin extends Plugin {
  postFilter(
    state: CycleState,
    pod: PodInfo,
    snapshot: Snapshot,
    nodeToStatus: ReadonlyMap<string, Status>,
  ): { readonly result?: PostFilterResult; readonly status: Status | null };
}

export interface PreScorePlugin extends Plugin {
  preScore(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[], snapshot: Snapshot): Status | null;
}

export interface NodeScore {
  readonly name: string;
  score: number;
}

export interface ScorePlugin extends Plugin {
  score(state: CycleState, pod: PodInfo, node: NodeInfo): number;
  normalizeScore?(state: CycleState, pod: PodInfo, scores: NodeScore[]): void;
}

export interface ReservePlugin extends Plugin {
  reserve(state: CycleState, pod: PodInfo, nodeName: string): Status | null;
  unreserve(state: CycleState, pod: PodInfo, nodeName: string): void;
}

export function isPreFilter(p: Plugin): p is PreFilterPlugin {
  return typeof (p as Partial<PreFilterPlugin>).preFilter === 'function';
}
export function isFilter(p: Plugin): p is FilterPlugin {
  return typeof (p as Partial<FilterPlugin>).filter === 'function';
}
export function isPostFilter(p: Plugin): p is PostFilterPlugin {
  return typeof (p as Partial<PostFilterPlugin>).postFilter === 'function';
}
export function isPreScore(p: Plugin): p is PreScorePlugin {
  return typeof (p as Partial<PreScorePlugin>).preScore === 'function';
}
export function isScore(p: Plugin): p is ScorePlugin {
  return typeof (p as Partial<ScorePlugin>).score === 'function';
}
export function isReserve(p: Plugin): p is ReservePlugin {
  return typeof (p as Partial<ReservePlugin>).reserve === 'function';
}
