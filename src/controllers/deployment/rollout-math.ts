// The numbers of a rollout (k/k deployment/util): maxSurge and maxUnavailable resolved against the
// desired size (surge rounds up, unavailable down; both 0 means unavailable 1), how far a new
// ReplicaSet may grow, and how a change of size is spread over the ReplicaSets in proportion to their
// sizes while a rollout is under way. Pure functions of the objects, so they are tested as tables.
import { scaledValueFromIntOrPercent, type IntOrString } from '../../api/int-or-string.js';
import type { Deployment, ReplicaSet } from '../apps-types.js';
import { specReplicas } from '../apps-types.js';
import { maxReplicasOf, revisionOf } from './annotations.js';

export function resolveFenceposts(maxSurge: IntOrString | undefined, maxUnavailable: IntOrString | undefined, desired: number): { surge: number; unavailable: number } {
  const surge = scaledValueFromIntOrPercent(maxSurge ?? 0, desired, true);
  const unavailable = scaledValueFromIntOrPercent(maxUnavailable ?? 0, desired, false);
  if (surge === 0 && unavailable === 0) return { surge, unavailable: 1 };
  return { surge, unavailable };
}

export function isRollingUpdate(d: Deployment): boolean {
  return (d.spec.strategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
}

function fenceposts(d: Deployment): { surge: number; unavailable: number } {
  const ru = d.spec.strategy?.rollingUpdate ?? {};
  // The API defaults both to 25%; an object read without defaults gets the same.
  return resolveFenceposts(ru.maxSurge ?? '25%', ru.maxUnavailable ?? '25%', specReplicas(d));
}

export function maxSurge(d: Deployment): number {
  return isRollingUpdate(d) ? fenceposts(d).surge : 0;
}

export function maxUnavailable(d: Deployment): number {
  const replicas = specReplicas(d);
  if (!isRollingUpdate(d) || replicas === 0) return 0;
  return Math.min(fenceposts(d).unavailable, replicas);
}

export const rsReplicas = (rs: ReplicaSet): number => specReplicas(rs);
/** Sum of spec.replicas. */
export const replicaCount = (sets: readonly (ReplicaSet | undefined)[]): number => sets.reduce((n, rs) => n + (rs ? rsReplicas(rs) : 0), 0);
/** Sum of status.replicas. */
export const actualReplicaCount = (sets: readonly (ReplicaSet | undefined)[]): number => sets.reduce((n, rs) => n + (rs?.status?.replicas ?? 0), 0);
export const readyReplicaCount = (sets: readonly (ReplicaSet | undefined)[]): number => sets.reduce((n, rs) => n + (rs?.status?.readyReplicas ?? 0), 0);
export const availableReplicaCount = (sets: readonly (ReplicaSet | undefined)[]): number => sets.reduce((n, rs) => n + (rs?.status?.availableReplicas ?? 0), 0);

export function activeReplicaSets(sets: readonly (ReplicaSet | undefined)[]): ReplicaSet[] {
  return sets.filter((rs): rs is ReplicaSet => rs !== undefined && rsReplicas(rs) > 0);
}

function created(rs: ReplicaSet): number {
  const t = rs.metadata.creationTimestamp ? Date.parse(rs.metadata.creationTimestamp) : NaN;
  return Number.isFinite(t) ? t : 0;
}

/** ReplicaSetsByCreationTimestamp: oldest first, ties by name. */
export function byCreation(a: ReplicaSet, b: ReplicaSet): number {
  return created(a) - created(b) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
}

/** ReplicaSetsBySizeNewer: larger first, then newer first. */
export function bySizeNewer(a: ReplicaSet, b: ReplicaSet): number {
  return rsReplicas(b) - rsReplicas(a) || -byCreation(a, b);
}

/** ReplicaSetsBySizeOlder: larger first, then older first. */
export function bySizeOlder(a: ReplicaSet, b: ReplicaSet): number {
  return rsReplicas(b) - rsReplicas(a) || byCreation(a, b);
}

/** ReplicaSetsByRevision: lowest revision first, ties by creation. */
export function byRevision(a: ReplicaSet, b: ReplicaSet): number {
  return revisionOf(a) - revisionOf(b) || byCreation(a, b);
}

/** NewRSNewReplicas: what the new ReplicaSet may be scaled to now. */
export function newRSNewReplicas(d: Deployment, all: readonly (ReplicaSet | undefined)[], newRS: ReplicaSet): number {
  const desired = specReplicas(d);
  if (!isRollingUpdate(d)) return desired;
  const current = replicaCount(all);
  const maxTotal = desired + maxSurge(d);
  if (current >= maxTotal) return rsReplicas(newRS);
  const up = Math.min(maxTotal - current, desired - rsReplicas(newRS));
  return rsReplicas(newRS) + up;
}

/** getReplicaSetFraction: this ReplicaSet's share of a resize, from the size it was scaled for. */
function fraction(rs: ReplicaSet, d: Deployment): number {
  if (specReplicas(d) === 0) return -rsReplicas(rs);
  const total = specReplicas(d) + maxSurge(d);
  const annotated = maxReplicasOf(rs) ?? d.status?.replicas ?? 0;
  if (annotated === 0) return 0;
  // Go's math.Round: halves away from zero (the size is never negative here).
  return Math.round((rsReplicas(rs) * total) / annotated) - rsReplicas(rs);
}

/** getProportion: how many of `toAdd` (negative to remove) this ReplicaSet takes, given `added` so far. */
export function proportion(rs: ReplicaSet, d: Deployment, toAdd: number, added: number): number {
  if (rsReplicas(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  const f = fraction(rs, d);
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(f, allowed) : Math.max(f, allowed);
}

/**
 * The sizes proportional scaling gives the active ReplicaSets when the Deployment is resized mid-rollout
 * (the RollingUpdate branch of DeploymentController.scale); the leftover goes to the first in order.
 */
export function proportionalSizes(d: Deployment, active: readonly ReplicaSet[]): Map<string, number> {
  const allowed = specReplicas(d) > 0 ? specReplicas(d) + maxSurge(d) : 0;
  const toAdd = allowed - replicaCount(active);
  const sets = [...active].sort(toAdd > 0 ? bySizeNewer : bySizeOlder);
  const sizes = new Map<string, number>();
  let added = 0;
  for (const rs of sets) {
    const p = toAdd !== 0 ? proportion(rs, d, toAdd, added) : 0;
    sizes.set(rs.metadata.name ?? '', rsReplicas(rs) + p);
    added += p;
  }
  const first = sets[0];
  if (toAdd !== 0 && first !== undefined) {
    const name = first.metadata.name ?? '';
    sizes.set(name, Math.max(0, (sizes.get(name) ?? 0) + toAdd - added));
  }
  return sizes;
}
