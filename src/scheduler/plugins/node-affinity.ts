// NodeAffinity: spec.nodeSelector and the required node affinity filter nodes; the preferred terms'
// weights score them (normalized by the best node).

import type { Labels, NodeSelector, Pod, PreferredSchedulingTerm } from '../api-types.js';
import type { ClusterEvent } from '../cluster-event.js';
import type { CycleState, FilterPlugin, NodeScore, PreFilterPlugin, PreScorePlugin, ScorePlugin } from '../framework.js';
import { maxNodeScore } from '../framework.js';
import type { NodeInfo } from '../node-info.js';
import type { PodInfo } from '../pod-info.js';
import { skipStatus, unresolvable } from '../status.js';
import type { Status } from '../status.js';
import { defaultNormalizeScore } from './normalize-score.js';
import { termMatches, termsMatch } from './node-selector-match.js';

export const errReasonPod = "node(s) didn't match Pod's node affinity/selector";

/** GetRequiredNodeAffinity(pod).Match: the node selector and the required terms. */
export function requiredNodeAffinityMatches(pod: Pod, labels: Labels, nodeName: string): boolean {
  const sel = pod.spec.nodeSelector;
  if (sel !== null && sel !== undefined) {
    for (const [k, v] of Object.entries(sel)) if (labels[k] !== v) return false;
  }
  const req: NodeSelector | null | undefined = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (req === null || req === undefined) return true;
  return termsMatch(req.nodeSelectorTerms, labels, nodeName);
}

function hasRequired(pod: Pod): boolean {
  const sel = pod.spec.nodeSelector;
  return (sel !== null && sel !== undefined && Object.keys(sel).length > 0) || (pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? null) !== null;
}

export class NodeAffinity implements PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin {
  readonly name = 'NodeAffinity';

  events(): readonly ClusterEvent[] {
    return [{ resource: 'Node', actions: ['Add', 'UpdateNodeLabel'] }];
  }

  preFilter(): Status | null {
    return null;
  }

  filter(_state: CycleState, pod: PodInfo, node: NodeInfo): Status | null {
    if (!hasRequired(pod.pod)) return null;
    if (requiredNodeAffinityMatches(pod.pod, node.labels, node.name)) return null;
    return unresolvable(errReasonPod);
  }

  preScore(state: CycleState, pod: PodInfo): Status | null {
    const terms = (pod.pod.spec.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? []).filter((t) => t.weight !== 0);
    if (terms.length === 0) return skipStatus;
    state.write('PreScoreNodeAffinity', terms);
    return null;
  }

  score(state: CycleState, _pod: PodInfo, node: NodeInfo): number {
    const terms = state.read<PreferredSchedulingTerm[]>('PreScoreNodeAffinity') ?? [];
    let s = 0;
    for (const t of terms) if (termMatches(t.preference, node.labels, node.name)) s += t.weight;
    return s;
  }

  normalizeScore(_state: CycleState, _pod: PodInfo, scores: NodeScore[]): void {
    defaultNormalizeScore(maxNodeScore, false, scores);
  }
}
