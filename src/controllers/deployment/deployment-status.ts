// A Deployment's status and conditions (k/k deployment/sync.go calculateStatus, deployment/util's
// conditions and DeploymentComplete/Progressing/TimedOut): counts summed over its ReplicaSets, Available
// against replicas - maxUnavailable, and the Progressing reasons kubectl rollout status reads.
import type { Condition, Deployment, DeploymentStatus, ReplicaSet } from '../apps-types.js';
import { rfc3339, specReplicas } from '../apps-types.js';
import { actualReplicaCount, availableReplicaCount, maxUnavailable, readyReplicaCount, replicaCount } from './rollout-math.js';

export const PROGRESSING = 'Progressing';
export const AVAILABLE = 'Available';
export const REPLICA_FAILURE = 'ReplicaFailure';

export const REASON = {
  newRSCreated: 'NewReplicaSetCreated',
  foundNewRS: 'FoundNewReplicaSet',
  rsUpdated: 'ReplicaSetUpdated',
  newRSAvailable: 'NewReplicaSetAvailable',
  timedOut: 'ProgressDeadlineExceeded',
  failedRSCreate: 'ReplicaSetCreateError',
  paused: 'DeploymentPaused',
  resumed: 'DeploymentResumed',
  minimumAvailable: 'MinimumReplicasAvailable',
  minimumUnavailable: 'MinimumReplicasUnavailable',
} as const;

export function newCondition(type: string, status: Condition['status'], reason: string, message: string, now: Date): Condition {
  const t = rfc3339(now);
  return { type, status, lastUpdateTime: t, lastTransitionTime: t, reason, message };
}

export function getCondition(s: DeploymentStatus | undefined, type: string): Condition | undefined {
  return s?.conditions?.find((c) => c.type === type);
}

/** SetDeploymentCondition: no change when status and reason are the same; the transition time kept when only the reason moves. */
export function setCondition(s: DeploymentStatus, c: Condition): void {
  const cur = getCondition(s, c.type);
  if (cur !== undefined && cur.status === c.status && cur.reason === c.reason) return;
  const next = cur !== undefined && cur.status === c.status && cur.lastTransitionTime ? { ...c, lastTransitionTime: cur.lastTransitionTime } : c;
  s.conditions = [...(s.conditions ?? []).filter((x) => x.type !== c.type), next];
}

export function removeCondition(s: DeploymentStatus, type: string): void {
  if (s.conditions === undefined) return;
  s.conditions = s.conditions.filter((c) => c.type !== type);
}

export function hasProgressDeadline(d: Deployment): boolean {
  const p = d.spec.progressDeadlineSeconds;
  // MaxInt32 means no deadline, as Kubernetes reads it.
  return p !== undefined && p !== 2147483647;
}

export function calculateStatus(all: readonly (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined, d: Deployment, now: Date): DeploymentStatus {
  const available = availableReplicaCount(all);
  const total = replicaCount(all);
  const status: DeploymentStatus = {
    ...(d.metadata.generation !== undefined ? { observedGeneration: d.metadata.generation } : {}),
    replicas: actualReplicaCount(all),
    updatedReplicas: actualReplicaCount([newRS]),
    readyReplicas: readyReplicaCount(all),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, total - available),
    ...(d.status?.collisionCount !== undefined ? { collisionCount: d.status.collisionCount } : {}),
    conditions: (d.status?.conditions ?? []).map((c) => ({ ...c })),
  };
  if (available >= specReplicas(d) - maxUnavailable(d)) setCondition(status, newCondition(AVAILABLE, 'True', REASON.minimumAvailable, 'Deployment has minimum availability.', now));
  else setCondition(status, newCondition(AVAILABLE, 'False', REASON.minimumUnavailable, 'Deployment does not have minimum availability.', now));
  return status;
}

/** DeploymentComplete: every replica updated and available, and the spec observed. */
export function deploymentComplete(d: Deployment, s: DeploymentStatus): boolean {
  const r = specReplicas(d);
  return (s.updatedReplicas ?? 0) === r && (s.replicas ?? 0) === r && (s.availableReplicas ?? 0) === r && (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 0);
}

/** DeploymentProgressing: more updated, fewer old, more ready or more available than last written. */
export function deploymentProgressing(d: Deployment, s: DeploymentStatus): boolean {
  const o = d.status ?? {};
  const oldOld = (o.replicas ?? 0) - (o.updatedReplicas ?? 0);
  const newOld = (s.replicas ?? 0) - (s.updatedReplicas ?? 0);
  return (s.updatedReplicas ?? 0) > (o.updatedReplicas ?? 0) || newOld < oldOld || (s.readyReplicas ?? 0) > (o.readyReplicas ?? 0) || (s.availableReplicas ?? 0) > (o.availableReplicas ?? 0);
}

/** DeploymentTimedOut: no progress for progressDeadlineSeconds since the Progressing condition was last updated. */
export function deploymentTimedOut(d: Deployment, s: DeploymentStatus, now: Date): boolean {
  if (!hasProgressDeadline(d)) return false;
  const c = getCondition(s, PROGRESSING);
  if (c === undefined || c.reason === REASON.newRSAvailable) return false;
  if (c.reason === REASON.timedOut) return true;
  const from = c.lastUpdateTime ? Date.parse(c.lastUpdateTime) : NaN;
  if (!Number.isFinite(from)) return false;
  return from + (d.spec.progressDeadlineSeconds ?? 0) * 1000 < now.getTime();
}

/** Status equality as a write decision: the fields, and the conditions' content (times included). */
export function sameDeploymentStatus(a: DeploymentStatus | undefined, b: DeploymentStatus): boolean {
  const norm = (s: DeploymentStatus | undefined): string =>
    JSON.stringify([
      s?.observedGeneration ?? 0,
      s?.replicas ?? 0,
      s?.updatedReplicas ?? 0,
      s?.readyReplicas ?? 0,
      s?.availableReplicas ?? 0,
      s?.unavailableReplicas ?? 0,
      s?.collisionCount ?? 0,
      [...(s?.conditions ?? [])].sort((x, y) => x.type.localeCompare(y.type)).map((c) => [c.type, c.status, c.reason, c.message, c.lastUpdateTime, c.lastTransitionTime]),
    ]);
  return norm(a) === norm(b);
}
