// A ReplicaSet's status from the pods it owns (k/k replica_set_utils.go calculateStatus): replicas,
// fullyLabeledReplicas (pods carrying every template label), readyReplicas, availableReplicas (ready for
// minReadySeconds), observedGeneration, and the ReplicaFailure condition. Kubernetes sets that condition
// once and leaves its message stale (k/k#127081); here it always carries the latest failure.
import type { Condition, Pod, ReplicaSet, ReplicaSetStatus } from '../apps-types.js';
import { rfc3339 } from '../apps-types.js';
import { isPodAvailable, isPodReady } from '../pod-readiness.js';

export const REPLICA_FAILURE = 'ReplicaFailure';

export interface ManageFailure {
  /** FailedCreate or FailedDelete. */
  readonly reason: string;
  readonly message: string;
}

export function calculateStatus(rs: ReplicaSet, pods: readonly Pod[], failure: ManageFailure | undefined, now: Date): ReplicaSetStatus {
  const templateLabels = rs.spec.template?.metadata?.labels ?? {};
  const minReady = rs.spec.minReadySeconds ?? 0;
  let fullyLabeled = 0;
  let ready = 0;
  let available = 0;
  for (const p of pods) {
    const labels = p.metadata.labels ?? {};
    if (Object.entries(templateLabels).every(([k, v]) => labels[k] === v)) fullyLabeled++;
    if (isPodReady(p)) {
      ready++;
      if (isPodAvailable(p, minReady, now.getTime())) available++;
    }
  }
  const conditions = (rs.status?.conditions ?? []).filter((c) => c.type !== REPLICA_FAILURE);
  if (failure !== undefined) {
    const old = rs.status?.conditions?.find((c) => c.type === REPLICA_FAILURE);
    const c: Condition = {
      type: REPLICA_FAILURE,
      status: 'True',
      reason: failure.reason,
      message: failure.message,
      lastTransitionTime: old?.status === 'True' && old.lastTransitionTime ? old.lastTransitionTime : rfc3339(now),
    };
    conditions.push(c);
  }
  const status: ReplicaSetStatus = {
    replicas: pods.length,
    fullyLabeledReplicas: fullyLabeled,
    readyReplicas: ready,
    availableReplicas: available,
    ...(rs.metadata.generation !== undefined ? { observedGeneration: rs.metadata.generation } : {}),
  };
  if (conditions.length > 0) status.conditions = conditions;
  return status;
}

/** Whether a write is needed: the API omits zero counts, so compare them as zeros. */
export function sameStatus(a: ReplicaSetStatus | undefined, b: ReplicaSetStatus): boolean {
  const norm = (s: ReplicaSetStatus | undefined): string =>
    JSON.stringify([
      s?.replicas ?? 0,
      s?.fullyLabeledReplicas ?? 0,
      s?.readyReplicas ?? 0,
      s?.availableReplicas ?? 0,
      s?.observedGeneration ?? 0,
      (s?.conditions ?? []).map((c) => [c.type, c.status, c.reason, c.message]),
    ]);
  return norm(a) === norm(b);
}
