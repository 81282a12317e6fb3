// syncRolloutStatus (k/k deployment/progress.go): status plus the Progressing condition — NewReplicaSetAvailable
// once complete, ReplicaSetUpdated while it moves (its lastUpdateTime refreshed, so the deadline counts from
// the last progress), ProgressDeadlineExceeded when it has not moved for progressDeadlineSeconds — and the
// new ReplicaSet's ReplicaFailure mirrored. A rollout still under way is looked at again when its deadline
// would pass, so the timeout is noticed without any event.
import type { Condition, ReplicaSet } from '../apps-types.js';
import type { DeploymentRun } from './deployment-sync.js';
import {
  calculateStatus,
  deploymentComplete,
  deploymentProgressing,
  deploymentTimedOut,
  getCondition,
  hasProgressDeadline,
  newCondition,
  removeCondition,
  sameDeploymentStatus,
  setCondition,
  PROGRESSING,
  REASON,
  REPLICA_FAILURE,
} from './deployment-status.js';

export async function syncRolloutStatus(run: DeploymentRun, all: readonly (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined): Promise<void> {
  const d = run.d;
  const now = run.now;
  const status = calculateStatus(all, newRS, d, now);
  if (!hasProgressDeadline(d)) removeCondition(status, PROGRESSING);
  const cur = getCondition(status, PROGRESSING);
  const complete = status.replicas === status.updatedReplicas && cur?.reason === REASON.newRSAvailable;
  const subject = newRS !== undefined ? `ReplicaSet ${JSON.stringify(newRS.metadata.name ?? '')}` : `Deployment ${JSON.stringify(d.metadata.name ?? '')}`;
  if (hasProgressDeadline(d) && !complete) {
    if (deploymentComplete(d, status)) {
      setCondition(status, newCondition(PROGRESSING, 'True', REASON.newRSAvailable, `${subject} has successfully progressed.`, now));
    } else if (deploymentProgressing(d, status)) {
      const c = newCondition(PROGRESSING, 'True', REASON.rsUpdated, `${subject} is progressing.`, now);
      if (cur !== undefined) {
        if (cur.status === 'True' && cur.lastTransitionTime) c.lastTransitionTime = cur.lastTransitionTime;
        removeCondition(status, PROGRESSING);
      }
      setCondition(status, c);
    } else if (deploymentTimedOut(d, status, now)) {
      setCondition(status, newCondition(PROGRESSING, 'False', REASON.timedOut, `${subject} has timed out progressing.`, now));
    }
  }
  const failure = newRS?.status?.conditions?.find((c) => c.type === REPLICA_FAILURE);
  if (failure !== undefined) {
    const c: Condition = { ...newCondition(REPLICA_FAILURE, failure.status, failure.reason ?? '', failure.message ?? '', now), ...(failure.lastTransitionTime ? { lastTransitionTime: failure.lastTransitionTime } : {}) };
    // The message moves with the ReplicaSet's (setCondition alone keeps the first one while the reason stays).
    removeCondition(status, REPLICA_FAILURE);
    setCondition(status, c);
    const old = getCondition(d.status, REPLICA_FAILURE);
    if (old !== undefined && old.status === c.status && old.reason === c.reason && old.message === c.message) {
      removeCondition(status, REPLICA_FAILURE);
      setCondition(status, old);
    }
  } else removeCondition(status, REPLICA_FAILURE);

  if (sameDeploymentStatus(d.status, status)) {
    requeueStuck(run, status);
    return;
  }
  await run.writeStatus(status);
  requeueStuck(run, status);
}

/** requeueStuckDeployment: look again when the progress deadline would pass. */
function requeueStuck(run: DeploymentRun, status: NonNullable<DeploymentRun['d']['status']>): void {
  const d = run.d;
  const cur = getCondition(status, PROGRESSING);
  if (!hasProgressDeadline(d) || cur === undefined) return;
  if (deploymentComplete(d, status) || cur.reason === REASON.timedOut) return;
  const from = cur.lastUpdateTime ? Date.parse(cur.lastUpdateTime) : NaN;
  if (!Number.isFinite(from)) return;
  const after = from + (d.spec.progressDeadlineSeconds ?? 0) * 1000 - run.now.getTime();
  run.requeueAfterMs = after < 1000 ? 0 : after + 1000;
}
