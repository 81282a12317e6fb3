// The glue between the API and the runtime for the pods bound to this node: an informer on
// spec.nodeName=<node> enqueues pod keys; a worker reads the pod from the cache and closes the gap —
// hands it to the runtime, posts the runtime's status through pods/status when it changed, and for a pod
// being deleted, once the runtime has stopped it (preStop, SIGTERM, SIGKILL after the grace period),
// finishes the deletion (DELETE, grace 0, uid precondition). Pods the runtime holds that the API no
// longer has (deleted while the agent was away, or force-deleted) are stopped and removed.
import type { Logger } from 'pino';
import type { EventRecorder } from '../client/event-recorder.js';
import type { SharedInformerFactory } from '../client/informer-factory.js';
import type { SharedInformer } from '../client/informer.js';
import { deletedObject } from '../client/informer.js';
import { objectKey, type KubeObject } from '../client/kube-object.js';
import { ResourceClient } from '../client/resource-client.js';
import { PODS } from '../client/resource-types.js';
import type { RestClient } from '../client/rest-client.js';
import { WorkQueue } from '../client/work-queue.js';
import { isGoneOrReplaced, runWorkers } from './queue-workers.js';
import type { PodRuntime } from './pod-runtime.js';
import type { Pod, PodCondition } from './pod-types.js';
import { StatusManager } from './status-manager.js';

export interface PodSyncDeps {
  readonly rest: RestClient;
  readonly factory: SharedInformerFactory;
  readonly runtime: PodRuntime;
  readonly nodeName: string;
  readonly recorder: EventRecorder;
  readonly log: Logger;
  /** Concurrent reconciles (default 16; a pod is never reconciled by two at once). */
  readonly workers?: number;
}

const podRef = (p: { uid: string; name: string; namespace: string }): KubeObject => ({
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: { name: p.name, namespace: p.namespace, uid: p.uid },
});

export class PodSync {
  readonly informer: SharedInformer<KubeObject>;
  private readonly pods: ResourceClient<KubeObject>;
  private readonly queue = new WorkQueue<string>();
  /** Writes the pods' statuses off the sync path, coalesced per pod. */
  private readonly statuses: StatusManager;
  /** uids being stopped and removed in the background (a grace period must not hold a worker). */
  private readonly removing = new Map<string, Promise<void>>();
  /** uid → the resourceVersion last handed to the runtime: our own status writes come back as updates. */
  private readonly handed = new Map<string, string>();
  /** Runtime status changes waiting for the next turn of the event loop (see the constructor). */
  private readonly changed = new Set<string>();
  private workers: Promise<void>[] = [];

  constructor(private readonly deps: PodSyncDeps) {
    this.pods = new ResourceClient(deps.rest, PODS);
    this.statuses = new StatusManager({
      // The state file first: the API never shows a container that a restarted agent would not adopt.
      write: async (p, status) => {
        await deps.runtime.persisted(p.uid);
        await this.pods.patchStatus(p.namespace, p.name, 'merge', { metadata: { uid: p.uid }, status });
      },
      log: deps.log,
    });
    this.informer = deps.factory.informerFor<KubeObject>(PODS, { fieldSelector: `spec.nodeName=${deps.nodeName}` });
    this.informer.addEventHandler({
      onAdd: (o) => this.enqueue(objectKey(o)),
      onUpdate: (_, o) => this.enqueue(objectKey(o)),
      onDelete: (o) => this.enqueue(objectKey(deletedObject(o))),
    });
    // The runtime reports a status after every sync, and a reconcile may sync: enqueueing on a later turn
    // (never in the same run of microtasks) keeps that cycle from starving timers and I/O.
    deps.runtime.on('status', (uid) => {
      if (this.changed.size === 0) setImmediate(() => this.flushChanged());
      this.changed.add(uid);
    });
    deps.runtime.on('event', (e) => deps.recorder.event(podRef(e.pod), e.type, e.reason, e.message, e.fieldPath));
  }

  private readonly since = new Map<string, number>();
  private enqueue(key: string): void {
    if (!this.since.has(key)) this.since.set(key, performance.now());
    this.queue.add(key);
  }

  private flushChanged(): void {
    for (const uid of this.changed) {
      const p = this.deps.runtime.pod(uid);
      if (p) this.enqueue(objectKey(p as unknown as KubeObject));
    }
    this.changed.clear();
  }

  /** Starts the workers once the informer has its first list (so adopted pods are judged against it). */
  async run(signal: AbortSignal): Promise<void> {
    if (!(await this.informer.waitForSync(signal))) return;
    for (const uid of this.deps.runtime.uids()) {
      const p = this.deps.runtime.pod(uid);
      if (p) this.queue.add(objectKey(p as unknown as KubeObject));
    }
    const n = this.deps.workers ?? 16;
    this.workers = runWorkers(this.queue, n, (k) => this.reconcile(k), this.deps.log);
  }

  async stop(): Promise<void> {
    this.queue.shutDown();
    await Promise.allSettled(this.workers);
    await this.statuses.stop();
  }

  /** Waits for background removals (tests, shutdown). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.removing.values()]);
  }


  private runtimeUidsFor(key: string): string[] {
    const rt = this.deps.runtime;
    return rt.uids().filter((uid) => {
      const p = rt.pod(uid);
      return p !== undefined && objectKey(p as unknown as KubeObject) === key;
    });
  }

  private remove(uid: string, graceSeconds: number | undefined): void {
    if (this.removing.has(uid)) return;
    const p = this.deps.runtime
      .removePod(uid, graceSeconds)
      .catch((e: unknown) => this.deps.log.error({ err: e, uid }, 'removing a pod failed'))
      .finally(() => {
        this.removing.delete(uid);
        this.statuses.forget(uid);
        this.handed.delete(uid);
      });
    this.removing.set(uid, p);
  }

  private async reconcile(key: string): Promise<void> {
    const t = this.since.get(key);
    this.since.delete(key);
    if (t !== undefined) this.deps.log.debug({ pod: key, waitedMs: Math.round(performance.now() - t), queued: this.queue.len() }, 'pod sync dequeued');
    const rt = this.deps.runtime;
    const pod = this.informer.lister.getByKey(key) as unknown as Pod | undefined;
    const uid = pod?.metadata.uid;
    // Another pod of the same name (recreated) or none at all: what the runtime has under it goes.
    for (const old of this.runtimeUidsFor(key)) {
      if (old !== uid) this.remove(old, rt.pod(old)?.spec.terminationGracePeriodSeconds);
    }
    if (pod === undefined || uid === undefined) return;
    const deleting = pod.metadata.deletionTimestamp !== undefined;
    const known = rt.uids().includes(uid);
    if (!known) {
      if (deleting) return this.finishDeletion(pod);
      // A terminal pod is never started again (an agent that lost its state must not rerun it).
      if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return;
    }
    if (this.removing.has(uid)) return;
    const rv = pod.metadata.resourceVersion ?? '';
    try {
      if (!known || this.handed.get(uid) !== rv) rt.syncPod(pod);
      this.handed.set(uid, rv);
    } catch (e) {
      this.deps.recorder.event(pod as unknown as KubeObject, 'Warning', 'Failed', (e as Error).message);
      this.deps.log.warn({ err: (e as Error).message, pod: key }, 'the runtime refused the pod');
      return;
    }
    // A sync under way (a new pod's first start, say) reports its status when it ends: writing the one
    // before it (ContainerCreating) would put a write in front of the Running one for nothing.
    if (!rt.isSyncing(uid)) this.postStatus(pod);
    if (deleting && rt.isTerminated(uid)) {
      // The terminal status must be in the API before the pod goes (what its owner and users read last).
      await this.statuses.flushed(uid);
      await this.finishDeletion(pod);
      this.remove(uid, 0);
    }
  }

  private postStatus(pod: Pod): void {
    const uid = pod.metadata.uid ?? '';
    const status = this.deps.runtime.status(uid);
    if (status === undefined) return;
    // Unchanged since our last write, and the API still says what we said: nothing to write. When another
    // writer changed our conditions (the node controller marks pods not ready while it judges the node
    // silent), ours are put back, as kubelet's status manager does when the API's status differs from its own.
    const target = { uid, namespace: pod.metadata.namespace ?? 'default', name: pod.metadata.name ?? '' };
    this.statuses.set(target, status, conditionsOverwritten(pod.status?.conditions, status.conditions));
  }

  private async finishDeletion(pod: Pod): Promise<void> {
    try {
      await this.pods.delete(pod.metadata.namespace ?? 'default', pod.metadata.name ?? '', { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid ?? '' } });
      this.deps.log.info({ pod: `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}` }, 'finished the pod deletion');
    } catch (e) {
      if (isGoneOrReplaced(e)) return; // gone, or a newer pod of that name
      throw e;
    }
  }
}

/** Whether `api` gives any condition of `ours` another status (or lacks it). */
export function conditionsOverwritten(api: readonly PodCondition[] | undefined, ours: readonly PodCondition[] | undefined): boolean {
  return (ours ?? []).some((c) => api?.find((a) => a.type === c.type)?.status !== c.status);
}
