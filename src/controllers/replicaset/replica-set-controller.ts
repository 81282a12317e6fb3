// The ReplicaSet controller (k/k pkg/controller/replicaset): informers on ReplicaSets and pods whose
// handlers only enqueue ReplicaSet keys and account for observed creates and deletes in the
// expectations; workers run ReplicaSetSync on each key.
import { labelSelectorAsSelector } from '../../api/label-selector.js';
import { OWNER_INDEX, ownerIndexFunc } from '../../client/indexer.js';
import { deletedObject, type DeletedFinalStateUnknown } from '../../client/informer.js';
import { objectKey } from '../../client/kube-object.js';
import { ResourceClient } from '../../client/resource-client.js';
import { PODS, REPLICASETS } from '../../client/resource-types.js';
import { WorkQueue } from '../../client/work-queue.js';
import type { Pod, ReplicaSet } from '../apps-types.js';
import type { Controller, ControllerContext } from '../controller.js';
import { controllerRefOf } from '../controller-ref-manager.js';
import { isPodReady } from '../pod-readiness.js';
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
  const sync = new ReplicaSetSync({
    replicaSets: rsInf.lister,
    pods: podInf.lister,
    podControl: {
      createPod: (ns, pod) => pods.create(pod, { namespace: ns }),
      deletePod: async (ns, name, uid) => {
        await pods.delete(ns, name, { preconditions: { uid } });
      },
      patchPod: async (ns, name, patch) => {
        await pods.patch(ns, name, 'merge', patch);
      },
    },
    rsWriter: { get: (ns, name) => sets.get(ns, name), updateStatus: (rs) => sets.updateStatus(rs) },
    expectations,
    recorder: ctx.recorderFor('replicaset-controller'),
    wallNow: () => ctx.clock.wallNow(),
  });

  /** The ReplicaSet a pod's controllerRef names, if it is one we know (same uid). */
  const resolve = (pod: Pod): ReplicaSet | undefined => {
    const ref = controllerRefOf(pod);
    if (ref === undefined || ref.kind !== RS_KIND) return undefined;
    const rs = rsInf.lister.get(pod.metadata.namespace ?? '', ref.name);
    return rs !== undefined && rs.metadata.uid === ref.uid ? rs : undefined;
  };
  /** The ReplicaSets whose selector matches an orphan pod (getPodReplicaSets). */
  const matching = (pod: Pod): ReplicaSet[] =>
    rsInf.lister.list(pod.metadata.namespace ?? '').filter((rs) => {
      try {
        return labelSelectorAsSelector(rs.spec.selector).matches(pod.metadata.labels ?? {});
      } catch {
        return false;
      }
    });
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
