// The ReplicaSet controller (k/k pkg/controller/replicaset): informers on ReplicaSets and pods whose
// handlers only enqueue ReplicaSet keys and account for observed creates and deletes in the
// expectations; workers run ReplicaSetSync on each key.
import { OWNER_INDEX, ownerIndexFunc } from '../../client/indexer.js';
import { deletedObject, type DeletedFinalStateUnknown } from '../../client/informer.js';
import { objectKey } from '../../client/kube-object.js';
import { ReconcileRecorder } from '../../client/reconcile-recorder.js';
import { ResourceClient } from '../../client/resource-client.js';
import { PODS, REPLICASETS } from '../../client/resource-types.js';
import { WorkQueue } from '../../client/work-queue.js';
import type { Pod, ReplicaSet } from '../apps-types.js';
import type { Controller, ControllerContext } from '../controller.js';
import { controllerRefOf, ownersSelecting, resolveControllerRef } from '../controller-ref-manager.js';
import { isPodReady } from '../pod-readiness.js';
import { mergePatcher, uidDeleter } from '../object-writes.js';
import { runQueueWorkers, runUntilAborted } from '../queue-workers.js';
import { Expectations } from './expectations.js';
import { ReplicaSetSync, RS_KIND } from './replica-set-sync.js';

export const REPLICASET_CONTROLLER = 'replicaset';

export function newReplicaSetController(ctx: ControllerContext): Controller {
  const log = ctx.log.child({ controller: REPLICASET_CONTROLLER });
  const owner = { [OWNER_INDEX]: ownerIndexFunc };
  const rsInf = ctx.informers.informerFor<ReplicaSet>(REPLICASETS, { indexers: owner });
  const podInf = ctx.informers.informerFor<Pod>(PODS, { indexers: owner });
  const queue = new WorkQueue<string>({ clock: ctx.clock });
  const expectations = new Expectations(ctx.clock);
  const pods = new ResourceClient<Pod>(ctx.rest, PODS);
  const sets = new ResourceClient<ReplicaSet>(ctx.rest, REPLICASETS);
  const records = new ReconcileRecorder({ rest: ctx.rest, controller: 'replicaset-controller', clock: ctx.clock, log });
  const sync = new ReplicaSetSync({
    replicaSets: rsInf.lister,
    pods: podInf.lister,
    podControl: {
      createPod: (ns, pod) => pods.create(pod, { namespace: ns }),
      deletePod: uidDeleter(pods),
      patchPod: mergePatcher(pods),
    },
    rsWriter: { get: (ns, name) => sets.get(ns, name), updateStatus: (rs) => sets.updateStatus(rs) },
    expectations,
    recorder: ctx.recorderFor('replicaset-controller'),
    wallNow: () => ctx.clock.wallNow(),
    log,
    loopRecord: (rs, report) => records.record(REPLICASETS, rs.metadata.namespace ?? '', rs.metadata.name ?? '', report),
  });

  const resolve = (pod: Pod): ReplicaSet | undefined => resolveControllerRef(pod, RS_KIND, rsInf.lister);
  /** getPodReplicaSets: the ReplicaSets whose selector matches an orphan pod. */
  const matching = (pod: Pod): ReplicaSet[] => ownersSelecting(pod, rsInf.lister.list(pod.metadata.namespace ?? ''), (rs) => rs.spec.selector);
  const enqueue = (rs: ReplicaSet): void => queue.add(objectKey(rs));
  const onPodDeleted = (pod: Pod): void => {
    const rs = resolve(pod);
    if (rs === undefined) return;
    expectations.deletionObserved(objectKey(rs), objectKey(pod));
    enqueue(rs);
  };

  rsInf.addEventHandler({
    onAdd: enqueue,
    onUpdate: (_o, n) => enqueue(n),
    onDelete: (o: ReplicaSet | DeletedFinalStateUnknown<ReplicaSet>) => {
      const rs = deletedObject(o);
      expectations.delete(objectKey(rs));
      records.forget(REPLICASETS, rs.metadata.namespace ?? '', rs.metadata.name ?? '');
      enqueue(rs);
    },
  });
  podInf.addEventHandler({
    onAdd: (pod) => {
      if (pod.metadata.deletionTimestamp) return onPodDeleted(pod);
      const rs = resolve(pod);
      if (rs !== undefined) {
        expectations.creationObserved(objectKey(rs));
        return enqueue(rs);
      }
      if (controllerRefOf(pod) === undefined) matching(pod).forEach(enqueue);
    },
    onUpdate: (old, pod) => {
      if (old.metadata.resourceVersion === pod.metadata.resourceVersion) return;
      if (pod.metadata.deletionTimestamp && !old.metadata.deletionTimestamp) return onPodDeleted(pod);
      const labelsChanged = JSON.stringify(old.metadata.labels ?? {}) !== JSON.stringify(pod.metadata.labels ?? {});
      const oldRef = controllerRefOf(old);
      const newRef = controllerRefOf(pod);
      if (oldRef !== undefined && oldRef.uid !== newRef?.uid) {
        const prev = resolve(old);
        if (prev !== undefined) enqueue(prev);
      }
      const rs = resolve(pod);
      if (rs !== undefined) {
        enqueue(rs);
        // A pod that just became ready becomes available minReadySeconds later: look again then.
        const minReady = rs.spec.minReadySeconds ?? 0;
        if (minReady > 0 && !isPodReady(old) && isPodReady(pod)) queue.addAfter(objectKey(rs), minReady * 1000 + 1000);
        return;
      }
      if (newRef === undefined && (labelsChanged || oldRef !== undefined)) matching(pod).forEach(enqueue);
    },
    onDelete: (o) => onPodDeleted(deletedObject(o)),
  });

  return {
    name: REPLICASET_CONTROLLER,
    async run(signal, workers) {
      if (!(await ctx.informers.waitForCacheSync(signal))) return;
      log.info({ workers }, 'starting');
      const running = runQueueWorkers(queue, workers, (key) => sync.sync(key), log);
      await runUntilAborted(queue, signal, running);
    },
  };
}
