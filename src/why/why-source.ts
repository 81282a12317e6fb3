// The seam `why` reads through: objects, the objects a uid owns, an object's events, its admission history
// and its loops' records. The CLI implements it over the API server (history and records through their
// `history` and `reconcile` subresources); tests may use the same.
import type { HistoryEntry } from '../apiserver/registry/history.js';
import type { ReconcileRecord } from '../apiserver/registry/reconcile-record.js';
import type { KubeObject } from '../client/kube-object.js';

/** One write (or refusal) as the API server records it beside the object (docs/why-records.md). */
export type { HistoryEntry } from '../apiserver/registry/history.js';
export type { AdmissionRecord as HistoryRecord } from '../apiserver/admission/interface.js';

/** One loop's record on an object (a controller's, the scheduler's), as the API server keeps it. */
export type LoopRecord = ReconcileRecord;

export type WhyKind = 'Deployment' | 'ReplicaSet' | 'Pod' | 'Node' | string;

export interface WhySource {
  /** undefined when the object does not exist. */
  get(kind: WhyKind, namespace: string, name: string): Promise<KubeObject | undefined>;
  /** Objects of `kind` in `namespace` whose ownerReferences name `uid`. */
  owned(kind: WhyKind, namespace: string, uid: string): Promise<KubeObject[]>;
  events(kind: WhyKind, o: KubeObject): Promise<KubeObject[]>;
  /** undefined: history cannot be read here. [] : none recorded. */
  history(kind: WhyKind, namespace: string, name: string): Promise<HistoryEntry[] | undefined>;
  /** The loops' records on the object (the reconcile subresource). undefined: they cannot be read here. */
  loopRecords(kind: WhyKind, namespace: string, name: string): Promise<LoopRecord[] | undefined>;
  /** The node's Lease (kube-node-lease) spec.renewTime, when it has one. */
  nodeLeaseRenewTime(node: string): Promise<string | undefined>;
  readonly historyAvailable: boolean;
  now(): number;
}
