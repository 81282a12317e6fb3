// PodTopologySpread: DoNotSchedule constraints filter (matching pods in the node's domain + the pod
// itself - the global minimum must not exceed maxSkew; a node without the topology label is out), and
// ScheduleAnyway constraints score (fewer matching pods in the domain is better). A pod with no
// constraints gets the system defaults (hostname maxSkew 3, zone maxSkew 5, ScheduleAnyway) over the
// selector of what owns it, as Kubernetes' defaulting does.

import { labelSelectorAsSelector } from '../../api/label-selector.js';
import type { Selector } from '../../api/labels-selector.js';
import { newRequirement } from '../../api/labels-selector.js';
import type { Pod, TopologySpreadConstraint } from '../api-types.js';
import { labelHostname, labelTopologyZone } from '../api-types.js';
import type { ClusterEvent } from '../cluster-event.js';
import type { CycleState, FilterPlugin, NodeScore, PreFilterPlugin, PreScorePlugin, ScorePlugin } from '../framework.js';
import { maxNodeScore } from '../framework.js';
import type { NodeInfo } from '../node-info.js';
import type { PodInfo } from '../pod-info.js';
import type { Snapshot } from '../snapshot.js';
import { skipStatus, unresolvable, unschedulable } from '../status.js';
import type { Status } from '../status.js';
import { requiredNodeAffinityMatches } from './node-affinity.js';
import { findUntoleratedTaint } from './tolerations.js';

export const errReasonConstraintsNotMatch = "node(s) didn't match pod topology spread constraints";
export const errReasonNodeLabelNotMatch = `${errReasonConstraintsNotMatch} (missing required label)`;

interface Constraint {
  readonly maxSkew: number;
  readonly topologyKey: string;
  readonly selector: Selector;
  readonly minDomains: number;
  readonly honorAffinity: boolean;
  readonly honorTaints: boolean;
}

/** Where the system default constraints get their selector: the pod's Services, ReplicaSets, StatefulSets. */
export type DefaultSelectorSource = (pod: Pod) => Selector | undefined;

function buildConstraints(pod: Pod, raw: readonly TopologySpreadConstraint[], when: string): Constraint[] {
  const out: Constraint[] = [];
  for (const c of raw) {
    if (c.whenUnsatisfiable !== when) continue;
    let selector = labelSelectorAsSelector(c.labelSelector);
    // matchLabelKeys: the pod's own values for those keys join the selector.
    for (const k of c.matchLabelKeys ?? []) {
      const v = pod.metadata.labels?.[k];
      if (v !== undefined) selector = selector.add(newRequirement(k, 'in', [v]));
    }
    out.push({
      maxSkew: c.maxSkew,
      topologyKey: c.topologyKey,
      selector,
      minDomains: c.minDomains ?? 1,
      honorAffinity: (c.nodeAffinityPolicy ?? 'Honor') === 'Honor',
      honorTaints: (c.nodeTaintsPolicy ?? 'Ignore') === 'Honor',
    });
  }
  return out;
}

function nodeHasAllKeys(labels: Readonly<Record<string, string>>, cs: readonly Constraint[]): boolean {
  return cs.every((c) => Object.prototype.hasOwnProperty.call(labels, c.topologyKey));
}

function includedByPolicies(c: Constraint, pod: PodInfo, node: NodeInfo): boolean {
  if (c.honorAffinity && !requiredNodeAffinityMatches(pod.pod, node.labels, node.name)) return false;
  if (c.honorTaints && findUntoleratedTaint(node.taints, pod.pod.spec.tolerations ?? [], (t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute') !== undefined) return false;
  return true;
}

export function countMatching(node: NodeInfo, selector: Selector, namespace: string): number {
  let n = 0;
  for (const p of node.pods) {
    if (p.terminating || p.namespace !== namespace) continue;
    if (selector.matches(p.labels)) n++;
  }
  return n;
}

interface PreFilterState {
  readonly constraints: Constraint[];
  /** Per constraint: domain value → matching pods. */
  readonly counts: Map<string, number>[];
}

interface PreScoreState {
  readonly constraints: Constraint[];
  readonly ignored: Set<string>;
  readonly counts: Map<string, number>[];
  readonly weights: number[];
}

const preFilterKey = 'PreFilterPodTopologySpread';
const preScoreKey = 'PreScorePodTopologySpread';

export class PodTopologySpread implements PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin {
  readonly name = 'PodTopologySpread';

  constructor(private readonly defaultSelector: DefaultSelectorSource = () => undefined) {}

  events(): readonly ClusterEvent[] {
    return [
      { resource: 'Pod', actions: ['Add', 'UpdatePodLabel', 'Delete'] },
      { resource: 'Node', actions: ['Add', 'Delete', 'UpdateNodeLabel', 'UpdateNodeTaint'] },
    ];
  }

  preFilter(state: CycleState, pod: PodInfo, snapshot: Snapshot): Status | null {
    const constraints = buildConstraints(pod.pod, pod.pod.spec.topologySpreadConstraints ?? [], 'DoNotSchedule');
    if (constraints.length === 0) return skipStatus;
    const counts = constraints.map(() => new Map<string, number>());
    for (const node of snapshot.list) {
      const labels = node.labels;
      if (!nodeHasAllKeys(labels, constraints)) continue;
      constraints.forEach((c, i) => {
        if (!includedByPolicies(c, pod, node)) return;
        const value = labels[c.topologyKey] as string;
        const m = counts[i] as Map<string, number>;
        m.set(value, (m.get(value) ?? 0) + countMatching(node, c.selector, pod.namespace));
      });
    }
    state.write(preFilterKey, { constraints, counts } satisfies PreFilterState);
    return null;
  }

  filter(state: CycleState, pod: PodInfo, node: NodeInfo): Status | null {
    const s = state.read<PreFilterState>(preFilterKey);
    if (s === undefined) return null;
    for (let i = 0; i < s.constraints.length; i++) {
      const c = s.constraints[i] as Constraint;
      const value = node.labels[c.topologyKey];
      if (value === undefined) return unresolvable(errReasonNodeLabelNotMatch, { topologyKey: c.topologyKey });
      const m = s.counts[i] as Map<string, number>;
      let min = Number.POSITIVE_INFINITY;
      for (const v of m.values()) if (v < min) min = v;
      // With fewer eligible domains than minDomains, the global minimum counts as zero.
      if (min === Number.POSITIVE_INFINITY || m.size < c.minDomains) min = 0;
      const self = c.selector.matches(pod.labels) ? 1 : 0;
      const matchNum = m.get(value) ?? 0;
      const skew = matchNum + self - min;
      if (skew > c.maxSkew) {
        return unschedulable(errReasonConstraintsNotMatch, { topologyKey: c.topologyKey, domain: value, matchNum, selfMatch: self, globalMin: min, maxSkew: c.maxSkew });
      }
    }
    return null;
  }

  preScore(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[], snapshot: Snapshot): Status | null {
    const spec = pod.pod.spec.topologySpreadConstraints ?? [];
    let constraints = buildConstraints(pod.pod, spec, 'ScheduleAnyway');
    const systemDefaulted = spec.length === 0;
    if (systemDefaulted) {
      const sel = this.defaultSelector(pod.pod);
      if (sel === undefined || sel.isEmpty() || sel.matchesNothing) return skipStatus;
      constraints = [
        { maxSkew: 3, topologyKey: labelHostname, selector: sel, minDomains: 1, honorAffinity: true, honorTaints: false },
        { maxSkew: 5, topologyKey: labelTopologyZone, selector: sel, minDomains: 1, honorAffinity: true, honorTaints: false },
      ];
    }
    if (constraints.length === 0) return skipStatus;
    const requireAll = !systemDefaulted;
    const ignored = new Set<string>();
    const counts = constraints.map(() => new Map<string, number>());
    const sizes = constraints.map(() => 0);
    for (const n of nodes) {
      if (requireAll && !nodeHasAllKeys(n.labels, constraints)) {
        ignored.add(n.name);
        continue;
      }
      constraints.forEach((c, i) => {
        if (c.topologyKey === labelHostname) return;
        const v = n.labels[c.topologyKey];
        if (v === undefined) return;
        const m = counts[i] as Map<string, number>;
        if (!m.has(v)) {
          m.set(v, 0);
          sizes[i] = (sizes[i] as number) + 1;
        }
      });
    }
    for (const n of snapshot.list) {
      if (requireAll && !nodeHasAllKeys(n.labels, constraints)) continue;
      constraints.forEach((c, i) => {
        if (c.topologyKey === labelHostname) return;
        const v = n.labels[c.topologyKey];
        const m = counts[i] as Map<string, number>;
        if (v === undefined || !m.has(v) || !includedByPolicies(c, pod, n)) return;
        m.set(v, (m.get(v) as number) + countMatching(n, c.selector, pod.namespace));
      });
    }
    const weights = constraints.map((c, i) => Math.log((c.topologyKey === labelHostname ? nodes.length - ignored.size : (sizes[i] as number)) + 2));
    state.write(preScoreKey, { constraints, ignored, counts, weights } satisfies PreScoreState);
    return null;
  }

  score(state: CycleState, pod: PodInfo, node: NodeInfo): number {
    const s = state.read<PreScoreState>(preScoreKey);
    if (s === undefined || s.ignored.has(node.name)) return 0;
    let score = 0;
    s.constraints.forEach((c, i) => {
      const v = node.labels[c.topologyKey];
      if (v === undefined) return;
      const cnt = c.topologyKey === labelHostname ? countMatching(node, c.selector, pod.namespace) : ((s.counts[i] as Map<string, number>).get(v) ?? 0);
      score += cnt * (s.weights[i] as number) + (c.maxSkew - 1);
    });
    return Math.round(score);
  }

  normalizeScore(state: CycleState, _pod: PodInfo, scores: NodeScore[]): void {
    const s = state.read<PreScoreState>(preScoreKey);
    if (s === undefined) return;
    let min = Number.MAX_SAFE_INTEGER;
    let max = 0;
    for (const sc of scores) {
      if (s.ignored.has(sc.name)) continue;
      if (sc.score < min) min = sc.score;
      if (sc.score > max) max = sc.score;
    }
    for (const sc of scores) {
      if (s.ignored.has(sc.name)) sc.score = 0;
      else if (max === 0) sc.score = maxNodeScore;
      else sc.score = Math.trunc((maxNodeScore * (max + min - sc.score)) / max);
    }
  }
}

