// The leader election record as it lives in a coordination.k8s.io/v1 Lease's spec (client-go's
// LeaderElectionRecord ⇄ LeaseSpec), and the fencing token that names one holding of it. Times are
// MicroTime (RFC 3339 with microseconds), as Kubernetes writes them.
import type { KubeObject } from './kube-object.js';

export interface LeaseRecord {
  /** '' when released. */
  readonly holderIdentity: string;
  readonly leaseDurationSeconds: number;
  readonly acquireTime: string;
  readonly renewTime: string;
  readonly leaseTransitions: number;
}

export interface LeaseObject extends KubeObject {
  spec?: Partial<LeaseRecord> & Record<string, unknown>;
}

/** metav1.MicroTime's wire form: `2026-01-01T00:00:00.000000Z`. */
export function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export function leaseRecordOf(lease: LeaseObject): LeaseRecord {
  const s = lease.spec ?? {};
  return {
    holderIdentity: typeof s.holderIdentity === 'string' ? s.holderIdentity : '',
    leaseDurationSeconds: typeof s.leaseDurationSeconds === 'number' ? s.leaseDurationSeconds : 0,
    acquireTime: typeof s.acquireTime === 'string' ? s.acquireTime : '',
    renewTime: typeof s.renewTime === 'string' ? s.renewTime : '',
    leaseTransitions: typeof s.leaseTransitions === 'number' ? s.leaseTransitions : 0,
  };
}

/** Whether two records are the same observation (client-go compares the raw record bytes). */
export function sameLeaseRecord(a: LeaseRecord | undefined, b: LeaseRecord): boolean {
  return (
    a !== undefined &&
    a.holderIdentity === b.holderIdentity &&
    a.leaseDurationSeconds === b.leaseDurationSeconds &&
    a.acquireTime === b.acquireTime &&
    a.renewTime === b.renewTime &&
    a.leaseTransitions === b.leaseTransitions
  );
}

/** The header the API server checks every fenced write against (src/apiserver/registry/fencing.ts). */
export const FENCING_HEADER = 'Setpoint-Fencing-Token';

/** `<lease-namespace>/<lease-name>/<holder>/<leaseTransitions>`. */
export function fencingTokenOf(namespace: string, name: string, holder: string, transitions: number): string {
  return `${namespace}/${name}/${holder}/${transitions}`;
}
