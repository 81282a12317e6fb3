// The annotations a Deployment keeps on its ReplicaSets (k/k deployment/util): the revision (the newest
// ReplicaSet's is one more than every older one's, so `kubectl rollout undo` can find an old template by
// number), desired-replicas and max-replicas (the Deployment's size and size+maxSurge when the ReplicaSet
// was last scaled, which proportional scaling reads), and the Deployment's own annotations copied over.
import type { KubeObject } from '../../client/kube-object.js';
import type { Deployment, ReplicaSet } from '../apps-types.js';

export const REVISION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS = 'deployment.kubernetes.io/max-replicas';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const DEPRECATED_ROLLBACK_TO = 'deprecated.deployment.rollback.to';

const NOT_COPIED = new Set([LAST_APPLIED, REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS, DEPRECATED_ROLLBACK_TO]);

/** Annotations Kubernetes does not copy between a Deployment and its ReplicaSets (kubectl's rollback skips the same). */
export function skipCopyAnnotation(key: string): boolean {
  return NOT_COPIED.has(key);
}

function intAnnotation(o: KubeObject, key: string): number | undefined {
  const v = o.metadata?.annotations?.[key];
  if (v === undefined || !/^-?\d+$/.test(v)) return undefined;
  return Number(v);
}

export function revisionOf(o: KubeObject): number {
  return intAnnotation(o, REVISION) ?? 0;
}

export function maxRevision(sets: readonly ReplicaSet[]): number {
  return sets.reduce((m, rs) => Math.max(m, revisionOf(rs)), 0);
}

export const desiredReplicasOf = (rs: ReplicaSet): number | undefined => intAnnotation(rs, DESIRED_REPLICAS);
export const maxReplicasOf = (rs: ReplicaSet): number | undefined => intAnnotation(rs, MAX_REPLICAS);

function annotationsOf(o: KubeObject): Record<string, string> {
  const m = (o.metadata ??= {});
  return (m.annotations ??= {});
}

/** SetReplicasAnnotations; true when something changed. */
export function setReplicasAnnotations(rs: ReplicaSet, desired: number, max: number): boolean {
  const a = annotationsOf(rs);
  if (a[DESIRED_REPLICAS] === String(desired) && a[MAX_REPLICAS] === String(max)) return false;
  a[DESIRED_REPLICAS] = String(desired);
  a[MAX_REPLICAS] = String(max);
  return true;
}

export function replicasAnnotationsNeedUpdate(rs: ReplicaSet, desired: number, max: number): boolean {
  const a = rs.metadata.annotations ?? {};
  return a[DESIRED_REPLICAS] !== String(desired) || a[MAX_REPLICAS] !== String(max);
}

/** SetNewReplicaSetAnnotations: copies the Deployment's annotations, raises the revision; true when changed. */
export function setNewReplicaSetAnnotations(d: Deployment, rs: ReplicaSet, newRevision: number, exists: boolean, desired: number, max: number): boolean {
  const a = annotationsOf(rs);
  let changed = false;
  for (const [k, v] of Object.entries(d.metadata.annotations ?? {})) {
    if (skipCopyAnnotation(k) || a[k] === v) continue;
    a[k] = v;
    changed = true;
  }
  const old = a[REVISION];
  if (old !== undefined && !/^\d+$/.test(old)) return changed;
  const oldRev = old === undefined ? 0 : Number(old);
  if (oldRev < newRevision) {
    a[REVISION] = String(newRevision);
    // As Kubernetes: a ReplicaSet brought back by a rollback remembers the revisions it had.
    if (old !== undefined) a[REVISION_HISTORY] = a[REVISION_HISTORY] ? `${a[REVISION_HISTORY]},${old}` : old;
    changed = true;
  }
  if (!exists && setReplicasAnnotations(rs, desired, max)) changed = true;
  return changed;
}
