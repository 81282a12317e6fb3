// A scheduling profile: the plugins at each extension point, in Kubernetes' default order, with the
// default score weights (TaintToleration 3, NodeAffinity 2, PodTopologySpread 2, NodeResourcesFit 1,
// NodeResourcesBalancedAllocation 1), and the runner of each point over them.

import type { CycleState, FilterPlugin, NodeScore, Plugin, PostFilterPlugin, PreFilterPlugin, PreFilterResult, PreScorePlugin, ReservePlugin, ScorePlugin } from './framework.js';
import { isFilter, isPostFilter, isPreFilter, isPreScore, isReserve, isScore } from './framework.js';
import type { NodeInfo } from './node-info.js';
import type { PodInfo } from './pod-info.js';
import { BalancedAllocation } from './plugins/balanced-allocation.js';
import { NodeAffinity } from './plugins/node-affinity.js';
import { NodeName } from './plugins/node-name.js';
import { NodePorts } from './plugins/node-ports.js';
import { NodeResourcesFit } from './plugins/node-resources-fit.js';
import { NodeUnschedulable } from './plugins/node-unschedulable.js';
import { PodTopologySpread } from './plugins/pod-topology-spread.js';
import type { DefaultSelectorSource } from './plugins/pod-topology-spread.js';
import { TaintToleration } from './plugins/taint-toleration.js';
import type { Snapshot } from './snapshot.js';
import { Status } from './status.js';

export interface WeightedPlugin {
  readonly plugin: Plugin;
  readonly weight: number;
}

export interface PreFilterOutcome {
  readonly status: Status | null;
  readonly nodeNames?: ReadonlySet<string>;
}

export class Profile {
  readonly plugins: readonly Plugin[];
  readonly preFilters: readonly PreFilterPlugin[];
  readonly filters: readonly FilterPlugin[];
  readonly postFilters: readonly PostFilterPlugin[];
  readonly preScores: readonly PreScorePlugin[];
  readonly scores: readonly { readonly plugin: ScorePlugin; readonly weight: number }[];
  readonly reserves: readonly ReservePlugin[];

  constructor(
    readonly schedulerName: string,
    weighted: readonly WeightedPlugin[],
    /** 0 means adaptive, as Kubernetes' default. */
    readonly percentageOfNodesToScore = 0,
  ) {
    this.plugins = weighted.map((w) => w.plugin);
    this.preFilters = this.plugins.filter(isPreFilter);
    this.filters = this.plugins.filter(isFilter);
    this.postFilters = this.plugins.filter(isPostFilter);
    this.preScores = this.plugins.filter(isPreScore);
    this.scores = weighted.filter((w) => isScore(w.plugin)).map((w) => ({ plugin: w.plugin as ScorePlugin, weight: w.weight }));
    this.reserves = this.plugins.filter(isReserve);
  }

  plugin(name: string): Plugin | undefined {
    return this.plugins.find((p) => p.name === name);
  }

  /** RunPreFilterPlugins: stops at the first failure; Skip marks the plugin's Filter skipped. */
  runPreFilter(state: CycleState, pod: PodInfo, snapshot: Snapshot): PreFilterOutcome {
    let nodeNames: Set<string> | undefined;
    for (const p of this.preFilters) {
      const r = p.preFilter(state, pod, snapshot);
      if (r instanceof Status) {
        if (r.code === 'Skip') {
          state.skipFilter.add(p.name);
          continue;
        }
        if (r.code !== 'Success') return { status: r.withPlugin(p.name) };
        continue;
      }
      const names = (r as PreFilterResult | null)?.nodeNames;
      if (names !== undefined) nodeNames = nodeNames === undefined ? new Set(names) : new Set([...nodeNames].filter((n) => names.has(n)));
    }
    return nodeNames === undefined ? { status: null } : { status: null, nodeNames };
  }

  /** RunFilterPlugins: the first plugin that rejects the node decides. */
  runFilter(state: CycleState, pod: PodInfo, node: NodeInfo): Status | null {
    const skip = state.skipFilter;
    for (const p of this.filters) {
      if (skip.size > 0 && skip.has(p.name)) continue;
      const st = p.filter(state, pod, node);
      if (st !== null && st.code !== 'Success') return st.withPlugin(p.name);
    }
    return null;
  }

  runPreScore(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[], snapshot: Snapshot): Status | null {
    for (const p of this.preScores) {
      const st = p.preScore(state, pod, nodes, snapshot);
      if (st === null) continue;
      if (st.code === 'Skip') state.skipScore.add(p.name);
      else if (st.code !== 'Success') return st.withPlugin(p.name);
    }
    return null;
  }

  /** RunScorePlugins + NormalizeScore + weights: each node's total. */
  runScore(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[]): number[] {
    const totals = new Array<number>(nodes.length).fill(0);
    for (const { plugin, weight } of this.scores) {
      if (state.skipScore.has(plugin.name)) continue;
      const scores: NodeScore[] = nodes.map((n) => ({ name: n.name, score: plugin.score(state, pod, n) }));
      plugin.normalizeScore?.(state, pod, scores);
      for (let i = 0; i < scores.length; i++) totals[i] = (totals[i] as number) + (scores[i] as NodeScore).score * weight;
    }
    return totals;
  }

  runReserve(state: CycleState, pod: PodInfo, nodeName: string): Status | null {
    for (let i = 0; i < this.reserves.length; i++) {
      const p = this.reserves[i] as ReservePlugin;
      const st = p.reserve(state, pod, nodeName);
      if (st !== null && st.code !== 'Success') {
        for (let j = i; j >= 0; j--) (this.reserves[j] as ReservePlugin).unreserve(state, pod, nodeName);
        return st.withPlugin(p.name);
      }
    }
    return null;
  }

  runUnreserve(state: CycleState, pod: PodInfo, nodeName: string): void {
    for (let j = this.reserves.length - 1; j >= 0; j--) (this.reserves[j] as ReservePlugin).unreserve(state, pod, nodeName);
  }
}

export interface DefaultProfileOptions {
  readonly schedulerName?: string;
  readonly percentageOfNodesToScore?: number;
  readonly defaultSelector?: DefaultSelectorSource;
  /** PostFilter plugins (DefaultPreemption), given by the caller since they need the profile itself. */
  readonly postFilters?: readonly Plugin[];
}

/** The default profile (default_plugins.go), without the volume, image and inter-pod affinity plugins. */
export function defaultProfile(opts: DefaultProfileOptions = {}): Profile {
  return new Profile(
    opts.schedulerName ?? 'default-scheduler',
    [
      { plugin: new NodeUnschedulable(), weight: 0 },
      { plugin: new NodeName(), weight: 0 },
      { plugin: new TaintToleration(), weight: 3 },
      { plugin: new NodeAffinity(), weight: 2 },
      { plugin: new NodePorts(), weight: 0 },
      { plugin: new NodeResourcesFit(), weight: 1 },
      { plugin: new PodTopologySpread(opts.defaultSelector), weight: 2 },
      { plugin: new BalancedAllocation(), weight: 1 },
      ...(opts.postFilters ?? []).map((plugin) => ({ plugin, weight: 0 })),
    ],
    opts.percentageOfNodesToScore ?? 0,
  );
}
