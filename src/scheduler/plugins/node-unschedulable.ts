// NodeUnschedulable: a cordoned node (spec.unschedulable) takes only pods that tolerate the
// node.kubernetes.io/unschedulable:NoSchedule taint.

import { taintNodeUnschedulable } from '../api-types.js';
import type { ClusterEvent } from '../cluster-event.js';
import type { CycleState, FilterPlugin } from '../framework.js';
import type { NodeInfo } from '../node-info.js';
import type { PodInfo } from '../pod-info.js';
import { unresolvable } from '../status.js';
import type { Status } from '../status.js';
import { toleratesTaint } from './tolerations.js';

export const errReasonUnschedulable = 'node(s) were unschedulable';

export class NodeUnschedulable implements FilterPlugin {
  readonly name = 'NodeUnschedulable';

  events(): readonly ClusterEvent[] {
    return [{ resource: 'Node', actions: ['Add', 'UpdateNodeTaint'] }, { resource: 'Pod', actions: ['UpdatePodTolerations'] }];
  }

  filter(_state: CycleState, pod: PodInfo, node: NodeInfo): Status | null {
    if (node.node?.spec?.unschedulable !== true) return null;
    const taint = { key: taintNodeUnschedulable, effect: 'NoSchedule' };
    if ((pod.pod.spec.tolerations ?? []).some((t) => toleratesTaint(t, taint))) return null;
    return unresolvable(errReasonUnschedulable);
  }
}
