// The garbage collector's view of the cluster: one node per object it watches, keyed by uid, with the
// ownerReferences it holds and the reverse edges (owner uid → dependents). Pure: fed by informer events,
// asked by the collector's workers. An owner named by a reference but never seen has no node; whether it
// is really gone is decided by a live lookup, never by its absence here (its informer may lag).
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from './finalizers.js';
import type { KubeObject, OwnerReference } from '../../client/kube-object.js';
import type { ResourceType } from '../../client/resource-client.js';

export interface GraphNode {
  readonly uid: string;
  readonly type: ResourceType;
  readonly namespace: string;
  readonly name: string;
  readonly owners: readonly OwnerReference[];
  /** deletionTimestamp is set. */
  readonly beingDeleted: boolean;
  /** Being deleted in the foreground: it waits for its blocking dependents. */
  readonly deletingDependents: boolean;
  /** Being deleted with the orphan finalizer: its dependents lose their references to it. */
  readonly orphaning: boolean;
}

export function nodeOf(type: ResourceType, o: KubeObject): GraphNode | undefined {
  const m = o.metadata;
  if (!m?.uid || !m.name) return undefined;
  const deleting = m.deletionTimestamp !== undefined && m.deletionTimestamp !== '';
  const fin = m.finalizers ?? [];
  return {
    uid: m.uid,
    type,
    namespace: m.namespace ?? '',
    name: m.name,
    owners: m.ownerReferences ?? [],
    beingDeleted: deleting,
    deletingDependents: deleting && fin.includes(FOREGROUND_FINALIZER),
    orphaning: deleting && fin.includes(ORPHAN_FINALIZER),
  };
}

export class DependencyGraph {
  private readonly nodes = new Map<string, GraphNode>();
  private readonly dependentsOf = new Map<string, Set<string>>();

  get size(): number {
    return this.nodes.size;
  }

  node(uid: string): GraphNode | undefined {
    return this.nodes.get(uid);
  }

  /** The nodes whose ownerReferences name this uid. */
  dependents(uid: string): GraphNode[] {
    const out: GraphNode[] = [];
    for (const d of this.dependentsOf.get(uid) ?? []) {
      const n = this.nodes.get(d);
      if (n !== undefined) out.push(n);
    }
    return out;
  }

  /** Dependents that hold this owner up in a foreground deletion (blockOwnerDeletion on their reference). */
  blockingDependents(uid: string): GraphNode[] {
    return this.dependents(uid).filter((d) => d.owners.some((r) => r.uid === uid && r.blockOwnerDeletion === true));
  }

  /** Adds or replaces a node; returns the one it replaced. */
  upsert(n: GraphNode): GraphNode | undefined {
    const old = this.nodes.get(n.uid);
    if (old !== undefined) this.unlink(old);
    this.nodes.set(n.uid, n);
    for (const r of n.owners) {
      let set = this.dependentsOf.get(r.uid);
      if (set === undefined) this.dependentsOf.set(r.uid, (set = new Set()));
      set.add(n.uid);
    }
    return old;
  }

  remove(uid: string): GraphNode | undefined {
    const old = this.nodes.get(uid);
    if (old === undefined) return undefined;
    this.unlink(old);
    this.nodes.delete(uid);
    return old;
  }

  private unlink(n: GraphNode): void {
    for (const r of n.owners) {
      const set = this.dependentsOf.get(r.uid);
      if (set === undefined) continue;
      set.delete(n.uid);
      if (set.size === 0) this.dependentsOf.delete(r.uid);
    }
  }
}
