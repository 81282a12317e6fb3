// The garbage collector (Kubernetes' pkg/controller/garbagecollector): informers on every kind that can
// own or be owned feed a dependency graph; two kinds of work go through one queue. `delete:<uid>` asks
// whether an object still has an owner (Background: its owners are gone, so it goes; Foreground: an
// owner waits for it) or, for an object being deleted in the foreground, whether its blocking dependents
// are gone so the `foregroundDeletion` finalizer can go. `orphan:<uid>` strips an owner being deleted with
// the `orphan` finalizer from its dependents' ownerReferences, then removes the finalizer.
import { isNotFound } from '../../client/api-status-error.js';
import { deletedObject } from '../../client/informer.js';
import { ReconcileRecorder } from '../../client/reconcile-recorder.js';
import type { KubeObject, OwnerReference } from '../../client/kube-object.js';
import { ResourceClient, type ResourceType } from '../../client/resource-client.js';
import { CONFIGMAPS, DEPLOYMENTS, LEASES, NODES, PODS, REPLICASETS, SECRETS, SERVICEACCOUNTS } from '../../client/resource-types.js';
import type { ControllerContext, ControllerFactory } from '../controller.js';
import { LoopController } from '../keyed-loop.js';
import { DependencyGraph, nodeOf, type GraphNode } from './dependency-graph.js';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from './finalizers.js';
import { decide, type OwnerState } from './gc-decision.js';
import { foregroundReport } from './gc-record.js';
import { editOwnerReferences, getSame, removeFinalizer } from './object-writes.js';

/** The kinds collected (events are left out, as Kubernetes leaves them out: they expire instead). */
export const GC_RESOURCES: readonly ResourceType[] = [PODS, NODES, CONFIGMAPS, SECRETS, SERVICEACCOUNTS, DEPLOYMENTS, REPLICASETS, LEASES];

const sameReferences = (a: GraphNode, b: GraphNode): boolean => JSON.stringify(a.owners) === JSON.stringify(b.owners);
const kindKey = (group: string, kind: string): string => `${group}/${kind}`;
const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');

export class GarbageCollector extends LoopController {
  readonly graph = new DependencyGraph();
  private readonly clients = new Map<string, ResourceClient>();
  /** Records on owners deleted in the foreground: what still blocks them. */
  readonly records: ReconcileRecorder;

  constructor(ctx: ControllerContext, types: readonly ResourceType[] = GC_RESOURCES) {
    super(ctx, 'garbage-collector');
    this.records = new ReconcileRecorder({ rest: ctx.rest, controller: 'garbage-collector', clock: ctx.clock, log: this.log });
    for (const t of types) {
      this.clients.set(kindKey(t.group, t.kind), new ResourceClient(ctx.rest, t));
      ctx.informers.informerFor(t).addEventHandler({
        onAdd: (o) => this.observe(t, o),
        onUpdate: (_old, o) => this.observe(t, o),
        onDelete: (o) => this.forget(deletedObject(o)),
      });
    }
  }

  private observe(t: ResourceType, o: KubeObject): void {
    const n = nodeOf(t, o);
    if (n === undefined) return;
    const prev = this.graph.upsert(n);
    // As Kubernetes' graph builder: only a new object, new references or a new deletion state need a look
    // (a pod's status updates do not), so steady churn costs no live reads.
    const changed = prev === undefined || !sameReferences(prev, n) || prev.beingDeleted !== n.beingDeleted || prev.deletingDependents !== n.deletingDependents || prev.orphaning !== n.orphaning;
    if (changed && (n.owners.length > 0 || n.deletingDependents)) this.loop.enqueue(`delete:${n.uid}`);
    if (changed && n.orphaning) this.loop.enqueue(`orphan:${n.uid}`);
    // An owner that waits for its dependents may be released by this change (a reference dropped, a deletion).
    for (const r of [...n.owners, ...(prev?.owners ?? [])]) this.kickWaitingOwner(r.uid);
    // An owner that starts waiting makes its dependents candidates for deletion.
    if (prev !== undefined && prev.deletingDependents !== n.deletingDependents) for (const d of this.graph.dependents(n.uid)) this.loop.enqueue(`delete:${d.uid}`);
  }

  private forget(o: KubeObject): void {
    const uid = o.metadata?.uid;
    if (!uid) return;
    const gone = this.graph.remove(uid);
    if (gone !== undefined) this.records.forget(gone.type, gone.namespace, gone.name);
    for (const d of this.graph.dependents(uid)) this.loop.enqueue(`delete:${d.uid}`);
    for (const r of gone?.owners ?? []) this.kickWaitingOwner(r.uid);
  }

  private kickWaitingOwner(uid: string): void {
    if (this.graph.node(uid)?.deletingDependents) this.loop.enqueue(`delete:${uid}`);
  }

  private clientFor(n: Pick<GraphNode, 'type'>): ResourceClient {
    return this.clients.get(kindKey(n.type.group, n.type.kind))!;
  }

  protected async reconcile(key: string): Promise<void> {
    const [job, uid = ''] = key.split(':');
    const n = this.graph.node(uid);
    if (n === undefined) return;
    if (job === 'orphan') return this.orphanDependents(n);
    if (n.deletingDependents) return this.processDeletingDependents(n);
    if (n.beingDeleted || n.owners.length === 0) return;
    // Judge the object as it is now, not as the cache last saw it (it may have been adopted or released).
    const client = this.clientFor(n);
    const latest = await getSame(client, n.namespace, n.name, n.uid);
    if (latest === undefined) return;
    const live = nodeOf(n.type, latest)!;
    if (live.deletingDependents) return this.processDeletingDependents(live);
    if (live.beingDeleted) return;
    const ownerState = new Map<string, OwnerState>();
    for (const r of live.owners) ownerState.set(r.uid, await this.ownerState(live.namespace, r));
    const deps = this.graph.dependents(n.uid);
    const action = decide({
      owners: live.owners,
      ownerState,
      hasDependents: deps.length > 0,
      dependentDeletingDependents: deps.some((d) => d.deletingDependents),
      finalizers: latest.metadata?.finalizers ?? [],
    });
    switch (action.kind) {
      case 'none':
        return;
      case 'removeReferences': {
        const drop = new Set(action.uids);
        this.log.info({ object: `${n.type.resource}/${n.namespace}/${n.name}`, owners: action.uids }, 'removing references to owners that are gone or waiting');
        return editOwnerReferences(client, n.namespace, n.name, n.uid, (refs) => refs.filter((r) => !drop.has(r.uid)));
      }
      case 'unblockThenDelete':
        await editOwnerReferences(client, n.namespace, n.name, n.uid, (refs) => refs.map((r) => (r.blockOwnerDeletion === true ? { ...r, blockOwnerDeletion: false } : r)));
        return this.deleteNode(live, 'Foreground');
      case 'delete':
        return this.deleteNode(live, action.policy);
    }
  }

  private async deleteNode(n: GraphNode, policy: 'Background' | 'Foreground' | 'Orphan'): Promise<void> {
    this.log.info({ object: `${n.type.resource}/${n.namespace}/${n.name}`, uid: n.uid, policy }, 'deleting an object whose owners are gone');
    try {
      await this.clientFor(n).delete(n.namespace, n.name, { propagationPolicy: policy, preconditions: { uid: n.uid } });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }

  /** What a live lookup says of one owner (an unknown kind is never taken for gone). */
  private async ownerState(namespace: string, r: OwnerReference): Promise<OwnerState> {
    const cached = this.graph.node(r.uid);
    if (cached !== undefined) return cached.deletingDependents ? 'waiting' : 'solid';
    const client = this.clients.get(kindKey(groupOf(r.apiVersion), r.kind));
    if (client === undefined) {
      this.log.warn({ owner: r }, 'owner of a kind the garbage collector does not watch: keeping the dependent');
      return 'solid';
    }
    // A cluster-scoped object cannot be owned by a namespaced one: Kubernetes treats the owner as absent.
    if (client.type.namespaced && namespace === '') return 'dangling';
    const owner = await getSame(client, client.type.namespaced ? namespace : '', r.name, r.uid);
    if (owner === undefined) return 'dangling';
    return nodeOf(client.type, owner)?.deletingDependents ? 'waiting' : 'solid';
  }

  /** Foreground: blocking dependents are deleted first; once none is left the owner's finalizer goes. */
  private async processDeletingDependents(n: GraphNode): Promise<void> {
    const blocking = this.graph.blockingDependents(n.uid);
    this.records.record(n.type, n.namespace, n.name, foregroundReport(n, this.graph.dependents(n.uid)));
    if (blocking.length === 0) {
      this.log.info({ object: `${n.type.resource}/${n.namespace}/${n.name}` }, 'no blocking dependents left: removing the foregroundDeletion finalizer');
      return removeFinalizer(this.clientFor(n), n.namespace, n.name, n.uid, FOREGROUND_FINALIZER);
    }
    for (const d of blocking) if (!d.deletingDependents) this.loop.enqueue(`delete:${d.uid}`);
  }

  /** Orphan: every dependent loses its reference to this owner, then the owner's finalizer goes. */
  private async orphanDependents(n: GraphNode): Promise<void> {
    if (!n.orphaning) return;
    for (const d of this.graph.dependents(n.uid)) {
      await editOwnerReferences(this.clientFor(d), d.namespace, d.name, d.uid, (refs) => refs.filter((r) => r.uid !== n.uid));
    }
    this.log.info({ object: `${n.type.resource}/${n.namespace}/${n.name}` }, 'dependents orphaned: removing the orphan finalizer');
    await removeFinalizer(this.clientFor(n), n.namespace, n.name, n.uid, ORPHAN_FINALIZER);
  }
}

export const garbageCollectorFactory: ControllerFactory = (ctx) => new GarbageCollector(ctx);
