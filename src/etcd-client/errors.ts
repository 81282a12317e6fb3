// Failures of etcd calls as typed values: a stable code per etcd error (matched on etcd's exact message, as
// clientv3's rpctypes does), the gRPC status, and whether the request can be known not to have reached a
// member — the one fact that decides whether a write may be tried again elsewhere.
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';

export type EtcdErrorCode =
  | 'ETCD_COMPACTED'
  | 'ETCD_FUTURE_REV'
  | 'ETCD_NO_LEADER'
  | 'ETCD_LEADER_CHANGED'
  | 'ETCD_TIMEOUT'
  | 'ETCD_STOPPED'
  | 'ETCD_NOT_CAPABLE'
  | 'ETCD_UNHEALTHY'
  | 'ETCD_TOO_MANY_REQUESTS'
  | 'ETCD_REQUEST_TOO_LARGE'
  | 'ETCD_TOO_MANY_OPS'
  | 'ETCD_DUPLICATE_KEY'
  | 'ETCD_EMPTY_KEY'
  | 'ETCD_KEY_NOT_FOUND'
  | 'ETCD_LEASE_NOT_FOUND'
  | 'ETCD_LEASE_TTL_TOO_LARGE'
  | 'ETCD_NO_SPACE'
  | 'ETCD_PERMISSION_DENIED'
  /** The member could not be reached, or the connection broke during the call. */
  | 'ETCD_UNAVAILABLE'
  | 'ETCD_DEADLINE_EXCEEDED'
  /** A message over this client's size limits (or the server's gRPC limit). */
  | 'ETCD_MESSAGE_TOO_LARGE'
  /** The server ended a watch for a reason other than compaction (cancel_reason). */
  | 'ETCD_WATCH_CANCELED'
  | 'ETCD_CLIENT_CLOSED'
  | 'ETCD_UNKNOWN';

/** etcd's messages (rpctypes) → codes. Several timeouts share a prefix. */
const BY_MESSAGE: readonly (readonly [string, EtcdErrorCode])[] = [
  ['etcdserver: mvcc: required revision has been compacted', 'ETCD_COMPACTED'],
  ['etcdserver: mvcc: required revision is a future revision', 'ETCD_FUTURE_REV'],
  ['etcdserver: no leader', 'ETCD_NO_LEADER'],
  ['etcdserver: leader changed', 'ETCD_LEADER_CHANGED'],
  ['etcdserver: request timed out', 'ETCD_TIMEOUT'],
  ['etcdserver: server stopped', 'ETCD_STOPPED'],
  ['etcdserver: not capable', 'ETCD_NOT_CAPABLE'],
  ['etcdserver: unhealthy cluster', 'ETCD_UNHEALTHY'],
  ['etcdserver: too many requests', 'ETCD_TOO_MANY_REQUESTS'],
  ['etcdserver: request is too large', 'ETCD_REQUEST_TOO_LARGE'],
  ['etcdserver: too many operations in txn request', 'ETCD_TOO_MANY_OPS'],
  ['etcdserver: duplicate key given in txn request', 'ETCD_DUPLICATE_KEY'],
  ['etcdserver: key is not provided', 'ETCD_EMPTY_KEY'],
  ['etcdserver: key not found', 'ETCD_KEY_NOT_FOUND'],
  ['etcdserver: requested lease not found', 'ETCD_LEASE_NOT_FOUND'],
  ['etcdserver: too large lease TTL', 'ETCD_LEASE_TTL_TOO_LARGE'],
  ['etcdserver: mvcc: database space exceeded', 'ETCD_NO_SPACE'],
  ['etcdserver: permission denied', 'ETCD_PERMISSION_DENIED'],
];

export class EtcdClientError extends Error {
  constructor(
    readonly code: EtcdErrorCode,
    message: string,
    readonly grpcCode: GrpcStatus,
    /** True when the request certainly did not reach a member's state machine: safe to send again. */
    readonly notSent: boolean,
    readonly endpoint?: string,
    /** For ETCD_COMPACTED from a watch: the revision the store has compacted to. */
    readonly compactRevision?: number,
  ) {
    super(message);
    this.name = 'EtcdClientError';
  }
}

function isServiceError(e: unknown): e is ServiceError {
  return typeof e === 'object' && e !== null && 'code' in e && typeof (e as { code: unknown }).code === 'number' && 'details' in e;
}

/** grpc-js' words for a call that found no connection to put itself on. */
const NOT_CONNECTED = /No connection established|ECONNREFUSED|Connection refused|ENOTFOUND|EHOSTUNREACH/;

/** Turns what a grpc-js call failed with into a typed error. */
export function fromGrpc(e: unknown, endpoint?: string): EtcdClientError {
  if (e instanceof EtcdClientError) return e;
  if (!isServiceError(e)) {
    const message = e instanceof Error ? e.message : String(e);
    return new EtcdClientError('ETCD_UNKNOWN', message, GrpcStatus.UNKNOWN, false, endpoint);
  }
  const details = e.details || e.message;
  const known = BY_MESSAGE.find(([m]) => details.startsWith(m));
  if (known) {
    // A leader-requiring call is refused before it is handled; an overloaded member refuses before proposing.
    const notSent = known[1] === 'ETCD_NO_LEADER' || known[1] === 'ETCD_TOO_MANY_REQUESTS';
    return new EtcdClientError(known[1], details, e.code, notSent, endpoint);
  }
  switch (e.code) {
    case GrpcStatus.UNAVAILABLE:
      return new EtcdClientError('ETCD_UNAVAILABLE', details, e.code, NOT_CONNECTED.test(details), endpoint);
    case GrpcStatus.DEADLINE_EXCEEDED:
      return new EtcdClientError('ETCD_DEADLINE_EXCEEDED', details, e.code, false, endpoint);
    case GrpcStatus.RESOURCE_EXHAUSTED:
      return new EtcdClientError('ETCD_MESSAGE_TOO_LARGE', details, e.code, false, endpoint);
    case GrpcStatus.CANCELLED:
      return new EtcdClientError('ETCD_CLIENT_CLOSED', details, e.code, false, endpoint);
    default:
      return new EtcdClientError('ETCD_UNKNOWN', details, e.code, false, endpoint);
  }
}

/**
 * Whether a failed call may be tried again on another member. Any call may when it never reached one; a
 * read also after a member that lost its leader, stopped, timed out or dropped the connection mid-call
 * (it changed nothing). A write that may have reached a member is never repeated: its caller decides.
 */
export function retryable(e: EtcdClientError, idempotent: boolean): boolean {
  if (e.notSent) return true;
  if (!idempotent) return false;
  switch (e.code) {
    case 'ETCD_UNAVAILABLE':
    case 'ETCD_LEADER_CHANGED':
    case 'ETCD_TIMEOUT':
    case 'ETCD_STOPPED':
    case 'ETCD_NOT_CAPABLE':
    case 'ETCD_UNHEALTHY':
    case 'ETCD_DEADLINE_EXCEEDED':
      return true;
    default:
      return false;
  }
}

export function clientClosed(): EtcdClientError {
  return new EtcdClientError('ETCD_CLIENT_CLOSED', 'etcd client is closed', GrpcStatus.CANCELLED, true);
}
