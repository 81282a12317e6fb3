// The Deployment controller (k/k pkg/controller/deployment): informers on Deployments, ReplicaSets and pods;
// handlers enqueue the Deployment a change concerns (a ReplicaSet's controller, or the Deployments whose
// selector matches an orphan; a pod deletion only matters to Recreate); workers run DeploymentSync.
import { OWNER_INDEX, ownerIndexFunc } from '../../client/indexer.js';
import { deletedObject } from '../../client/informer.js';
import { objectKey } from '../../client/kube-object.js';
import { ReconcileRecorder } from '../../client/reconcile-recorder.js';
import { ResourceClient } from '../../client/resource-client.js';
import { DEPLOYMENTS, PODS, REPLICASETS } from '../../client/resource-types.js';
import { WorkQueue } from '../../client/work-queue.js';
import type { Deployment, Pod, ReplicaSet } from '../apps-types.js';
import type { Controller, ControllerContext } from '../controller.js';
import { controllerRefOf, ownersSelecting, resolveControllerRef } from '../controller-ref-manager.js';
import { mergePatcher, uidDeleter } from '../object-writes.js';
import { runQueueWorkers, runUntilAborted } from '../queue-workers.js';
import { DEPLOYMENT_KIND, DeploymentSync } from './deployment-sync.js';

export const DEPLOYMENT_CONTROLLER = 'deployment';
/** Kubernetes' maxRetries for a Deployment key before it waits for its next event. */
const MAX_RETRIES = 15;

export function newDeploymentController(ctx: ControllerContext): Controller {
  const log = ctx.log.child({ controller: DEPLOYMENT_CONTROLLER });
  const owner = { [OWNER_INDEX]: ownerIndexFunc };
  const dInf = ctx.informers.informerFor<Deployment>(DEPLOYMENTS);
  const rsInf = ctx.informers.informerFor<ReplicaSet>(REPLICASETS, { indexers: owner });
  const podInf = ctx.informers.informerFor<Pod>(PODS, { indexers: owner });
  const queue = new WorkQueue<string>({ clock: ctx.clock });
  const deployments = new ResourceClient<Deployment>(ctx.rest, DEPLOYMENTS);
  const sets = new ResourceClient<ReplicaSet>(ctx.rest, REPLICASETS);
  const records = new ReconcileRecorder({ rest: ctx.rest, controller: 'deployment-controller', clock: ctx.clock, log });
  const sync = new DeploymentSync({
    deployments: dInf.lister,
    replicaSets: rsInf.lister,
    pods: podInf.lister,
    writer: {
      getDeployment: (ns, name) => deployments.get(ns, name),
      updateDeploymentStatus: (d) => deployments.updateStatus(d),
      patchDeploymentAnnotations: (ns, name, annotations) => deployments.patch(ns, name, 'merge', { metadata: { annotations } }),
      getReplicaSet: (ns, name) => sets.get(ns, name),
      createReplicaSet: (ns, rs) => sets.create(rs, { namespace: ns }),
      updateReplicaSet: (rs) => sets.update(rs),
      deleteReplicaSet: uidDeleter(sets),
      patchReplicaSet: mergePatcher(sets),
    },
    recorder: ctx.recorderFor('deployment-controller'),
    wallNow: () => ctx.clock.wallNow(),
    loopRecord: (d, report) => records.record(DEPLOYMENTS, d.metadata.namespace ?? '', d.metadata.name ?? '', report),
  });

  const resolve = (rs: ReplicaSet): Deployment | undefined => resolveControllerRef(rs, DEPLOYMENT_KIND, dInf.lister);
  const matching = (rs: ReplicaSet): Deployment[] => ownersSelecting(rs, dInf.lister.list(rs.metadata.namespace ?? ''), (d) => d.spec.selector);
  const enqueue = (d: Deployment): void => queue.add(objectKey(d));
  const onRS = (rs: ReplicaSet): void => {
    const d = resolve(rs);
    if (d !== undefined) enqueue(d);
    else if (controllerRefOf(rs) === undefined) matching(rs).forEach(enqueue);
  };

  dInf.addEventHandler({
    onAdd: enqueue,
    onUpdate: (_o, n) => enqueue(n),
    onDelete: (o) => {
      const d = deletedObject(o);
      records.forget(DEPLOYMENTS, d.metadata.namespace ?? '', d.metadata.name ?? '');
      enqueue(d);
    },
  });
  rsInf.addEventHandler({
    onAdd: onRS,
    onUpdate: (old, rs) => {
      if (old.metadata.resourceVersion === rs.metadata.resourceVersion) return;
      const oldRef = controllerRefOf(old);
      if (oldRef !== undefined && oldRef.uid !== controllerRefOf(rs)?.uid) {
        const prev = resolve(old);
        if (prev !== undefined) enqueue(prev);
      }
      onRS(rs);
    },
    onDelete: (o) => {
      const d = resolve(deletedObject(o));
      if (d !== undefined) enqueue(d);
    },
  });
  podInf.addEventHandler({
    // Recreate waits for the old pods to be gone: their deletion is what lets it go on.
    onDelete: (o) => {
      const pod = deletedObject(o);
      const ref = controllerRefOf(pod);
      if (ref === undefined || ref.kind !== 'ReplicaSet') return;
      const rs = rsInf.lister.get(pod.metadata.namespace ?? '', ref.name);
      const d = rs !== undefined ? resolve(rs) : undefined;
      if (d !== undefined && d.spec.strategy?.type === 'Recreate') enqueue(d);
    },
  });

  return {
    name: DEPLOYMENT_CONTROLLER,
    async run(signal, workers) {
      if (!(await ctx.informers.waitForCacheSync(signal))) return;
      log.info({ workers }, 'starting');
      const running = runQueueWorkers(queue, workers, (key) => sync.sync(key), log, { maxRetries: MAX_RETRIES });
      await runUntilAborted(queue, signal, running);
    },
  };
}
