// NodeName: a pod that names its node fits only there.

import type { ClusterEvent } from '../cluster-event.js';
import type { CycleState, FilterPlugin } from '../framework.js';
import type { NodeInfo } from '../node-info.js';
import type { PodInfo } from '../pod-info.js';
import { unresolvable } from '../status.js';
import type { Status } from '../status.js';

export const errReasonNodeName = "node(s) didn't match the requested node name";

export class NodeName implements FilterPlugin {
  readonly name = 'NodeName';

  events(): readonly ClusterEvent[] {
    return [{ resource: 'Node', actions: ['Add'] }];
  }

  filter(_state: CycleState, pod: PodInfo, node: NodeInfo): Status | null {
    const want = pod.pod.spec.nodeName;
    if (want === undefined || want === '' || want === node.name) return null;
    return unresolvable(errReasonNodeName);
  }
}
