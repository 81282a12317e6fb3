// The parts of core/v1 Node, Lease and Pod the node lifecycle controller reads and writes.
import { NODE_INDEX, nodeNameIndexFunc } from '../../client/indexer.js';
import type { SharedInformerFactory } from '../../client/informer-factory.js';
import type { SharedInformer } from '../../client/informer.js';
import type { KubeObject } from '../../client/kube-object.js';
import { NODES, PODS } from '../../client/resource-types.js';
import type { StatusCondition } from '../status-conditions.js';

export interface NodeTaint {
  readonly key: string;
  readonly value?: string;
  readonly effect: string;
  readonly timeAdded?: string;
}

export interface PodToleration {
  readonly key?: string;
  readonly operator?: string;
  readonly value?: string;
  readonly effect?: string;
  readonly tolerationSeconds?: number | null;
}

export interface NodeObject extends KubeObject {
  spec?: { unschedulable?: boolean; taints?: NodeTaint[] };
  status?: { conditions?: StatusCondition[] };
}

export interface LeaseObject extends KubeObject {
  spec?: { holderIdentity?: string; renewTime?: string; leaseDurationSeconds?: number };
}

export interface PodObject extends KubeObject {
  spec?: { nodeName?: string; tolerations?: PodToleration[] };
  status?: { phase?: string; conditions?: StatusCondition[] };
}

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
export const TAINT_UNREACHABLE = 'node.kubernetes.io/unreachable';
export const TAINT_NOT_READY = 'node.kubernetes.io/not-ready';
export const TAINT_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';

/** The node and pod informers both node controllers share (pods indexed by spec.nodeName). */
export function nodeAndPodInformers(informers: SharedInformerFactory): { nodes: SharedInformer<NodeObject>; pods: SharedInformer<PodObject> } {
  return {
    nodes: informers.informerFor<NodeObject>(NODES),
    pods: informers.informerFor<PodObject>(PODS, { indexers: { [NODE_INDEX]: nodeNameIndexFunc } }),
  };
}
