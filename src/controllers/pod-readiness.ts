// What Kubernetes means by a pod being active, ready and available (podutil.IsPodReady,
// IsPodAvailable, controller.IsPodActive): the ReplicaSet's status and the Deployment's rollout math
// count pods through these, and nothing else.
import type { Pod, PodCondition } from './apps-types.js';

export function readyCondition(pod: Pod): PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === 'Ready');
}

export function isPodReady(pod: Pod): boolean {
  return readyCondition(pod)?.status === 'True';
}

/** Ready for at least minReadySeconds, judged on the Ready condition's lastTransitionTime against `nowMs` (wall clock). */
export function isPodAvailable(pod: Pod, minReadySeconds: number, nowMs: number): boolean {
  const c = readyCondition(pod);
  if (c?.status !== 'True') return false;
  if (minReadySeconds <= 0) return true;
  const since = c.lastTransitionTime ? Date.parse(c.lastTransitionTime) : NaN;
  return Number.isFinite(since) && since + minReadySeconds * 1000 <= nowMs;
}

/** Not terminated and not being deleted: the pods a ReplicaSet counts. */
export function isPodActive(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !pod.metadata.deletionTimestamp;
}
