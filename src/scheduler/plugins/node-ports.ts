// NodePorts: a pod's host ports must be free on the node (per IP and protocol, 0.0.0.0 meaning all IPs).

import type { ClusterEvent } from '../cluster-event.js';
import type { CycleState, FilterPlugin, PreFilterPlugin } from '../framework.js';
import type { NodeInfo } from '../node-info.js';
import type { PodInfo } from '../pod-info.js';
import { skipStatus, unschedulable } from '../status.js';
import type { Status } from '../status.js';

export const errReasonPorts = "node(s) didn't have free ports for the requested pod ports";

export class NodePorts implements PreFilterPlugin, FilterPlugin {
  readonly name = 'NodePorts';

  events(): readonly ClusterEvent[] {
    return [
      { resource: 'Pod', actions: ['Delete'], hint: (pod, ev) => (ev.oldObj !== undefined && 'spec' in ev.oldObj && (ev.oldObj.spec as { nodeName?: string }).nodeName !== undefined && pod.hostPorts.length > 0 ? 'Queue' : 'QueueSkip') },
      { resource: 'Node', actions: ['Add'] },
    ];
  }

  preFilter(_state: CycleState, pod: PodInfo): Status | null {
    return pod.hostPorts.length === 0 ? skipStatus : null;
  }

  filter(_state: CycleState, pod: PodInfo, node: NodeInfo): Status | null {
    if (node.usedPorts.size === 0) return null;
    const taken = pod.hostPorts.filter((p) => node.usedPorts.conflicts(p));
    if (taken.length === 0) return null;
    return unschedulable(errReasonPorts, { ports: taken });
  }
}
