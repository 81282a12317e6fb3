// TaintToleration: Filter rejects nodes with an untolerated NoSchedule or NoExecute taint; Score counts
// the untolerated PreferNoSchedule taints, fewer being better (normalized in reverse).

import type { ClusterEvent } from '../cluster-event.js';
import type { CycleState, FilterPlugin, NodeScore, PreScorePlugin, ScorePlugin } from '../framework.js';
import { maxNodeScore } from '../framework.js';
import type { NodeInfo } from '../node-info.js';
import type { PodInfo } from '../pod-info.js';
import { skipStatus, unresolvable } from '../status.js';
import type { Status } from '../status.js';
import type { Toleration } from '../api-types.js';
import { defaultNormalizeScore } from './normalize-score.js';
import { findUntoleratedTaint, toleratesTaint } from './tolerations.js';

const stateKey = 'PreScoreTaintToleration';

export class TaintToleration implements FilterPlugin, PreScorePlugin, ScorePlugin {
  readonly name = 'TaintToleration';

  events(): readonly ClusterEvent[] {
    return [{ resource: 'Node', actions: ['Add', 'UpdateNodeTaint'] }, { resource: 'Pod', actions: ['UpdatePodTolerations'] }];
  }

  filter(_state: CycleState, pod: PodInfo, node: NodeInfo): Status | null {
    const taints = node.taints;
    if (taints.length === 0) return null;
    const taint = findUntoleratedTaint(taints, pod.pod.spec.tolerations ?? [], (t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute');
    if (taint === undefined) return null;
    return unresolvable(`node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`, { taint });
  }

  preScore(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[]): Status | null {
    // Nothing to score when no candidate has a PreferNoSchedule taint.
    if (!nodes.some((n) => n.taints.some((t) => t.effect === 'PreferNoSchedule'))) return skipStatus;
    const tolerations = (pod.pod.spec.tolerations ?? []).filter((t) => t.effect === undefined || t.effect === '' || t.effect === 'PreferNoSchedule');
    state.write(stateKey, tolerations);
    return null;
  }

  score(state: CycleState, _pod: PodInfo, node: NodeInfo): number {
    const tolerations = state.read<Toleration[]>(stateKey) ?? [];
    let n = 0;
    for (const taint of node.taints) {
      if (taint.effect !== 'PreferNoSchedule') continue;
      if (!tolerations.some((t) => toleratesTaint(t, taint))) n++;
    }
    return n;
  }

  normalizeScore(_state: CycleState, _pod: PodInfo, scores: NodeScore[]): void {
    defaultNormalizeScore(maxNodeScore, true, scores);
  }
}
