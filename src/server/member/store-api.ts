// What the etcd v3 gRPC services need from a store member. The services are a thin, 1:1 mapping of
// wire messages onto these calls; everything here speaks the kv layer's types (src/kv/types.ts) and
// throws EtcdError (src/kv/errors.ts) with etcd's exact messages and gRPC codes.
import type { SnapshotMember } from '../../kv/etcd-snapshot.js';
import type { DeleteRangeRequest, DeleteRangeResponse, PutRequest, PutResponse, RangeRequest, RangeResponse, TxnRequest, TxnResponse } from '../../kv/types.js';
import type { WatchStream, WatchResponseSender } from '../../watch/watch-stream.js';
import type { AuthApi } from '../auth/auth-api.js';
import type { AuthInfo } from '../auth/auth-state.js';

/** Every response header carries these; ids are unsigned 64-bit, kept as decimal strings. */
export interface Header {
  readonly clusterId: string;
  readonly memberId: string;
  readonly revision: number;
  readonly raftTerm: number;
}

/** A cluster member as the Cluster service lists it: the shape etcd's snapshots record (kv/etcd-snapshot.ts). */
export type MemberInfo = SnapshotMember;

export interface StatusInfo {
  readonly version: string;
  readonly dbSize: number;
  readonly dbSizeInUse: number;
  /** uint64 decimal string; '0' when there is no leader. */
  readonly leader: string;
  readonly raftIndex: number;
  readonly raftTerm: number;
  readonly raftAppliedIndex: number;
  readonly errors: readonly string[];
  readonly isLearner: boolean;
}

export type AlarmType = 'NONE' | 'NOSPACE' | 'CORRUPT';
export interface AlarmMember {
  readonly memberId: string;
  readonly alarm: AlarmType;
}

/**
 * What the client edge knows of a write that the store does not: it measured the request on the wire and
 * found it over --max-request-bytes. The store refuses it with etcd's "request is too large", after the
 * request's own checks, as etcd orders them.
 */
export interface WriteOptions {
  readonly tooLarge?: boolean;
  /** The caller (its token's user), checked while auth is enabled; undefined: no token. */
  readonly auth?: AuthInfo | undefined;
}

/** Who a read comes from, checked while auth is enabled. */
export interface ReadOptions {
  readonly auth?: AuthInfo | undefined;
}

export interface StoreApi {
  /** A header for a response made now (revision = the current revision unless given). */
  header(revision?: number): Header;

  // KV
  /** Linearizable unless req.serializable (then served from local state). */
  range(req: RangeRequest, opts?: ReadOptions): Promise<RangeResponse>;
  put(req: PutRequest, opts?: WriteOptions): Promise<PutResponse>;
  deleteRange(req: DeleteRangeRequest, opts?: WriteOptions): Promise<DeleteRangeResponse>;
  txn(req: TxnRequest, opts?: WriteOptions): Promise<TxnResponse>;
  /** Resolves when the compaction is applied, and (physical) once superseded data is removed. */
  compact(revision: number, physical: boolean): Promise<{ revision: number }>;

  // Watch: one WatchStream per client stream (see src/watch/watch-stream.ts); the service closes it.
  openWatchStream(send: WatchResponseSender): WatchStream;

  // Lease (ids are int64 decimal strings; '0' asks the server to choose)
  leaseGrant(id: string, ttl: number): Promise<{ id: string; ttl: number }>;
  leaseRevoke(id: string, opts?: ReadOptions): Promise<{ revision: number }>;
  /** TTL 0 for an unknown lease (not an error), as etcd. Forwarded to the leader when needed. */
  leaseKeepAlive(id: string): Promise<{ id: string; ttl: number }>;
  leaseTimeToLive(id: string, keys: boolean): Promise<{ id: string; ttl: number; grantedTtl: number; keys: Uint8Array[] }>;
  leaseLeases(): Promise<{ ids: string[] }>;

  // Cluster
  memberList(): Promise<{ members: MemberInfo[] }>;
  memberAdd(peerURLs: readonly string[], isLearner: boolean): Promise<{ member: MemberInfo; members: MemberInfo[] }>;
  memberRemove(id: string): Promise<{ members: MemberInfo[] }>;
  memberUpdate(id: string, peerURLs: readonly string[]): Promise<{ members: MemberInfo[] }>;
  memberPromote(id: string): Promise<{ members: MemberInfo[] }>;

  // Maintenance
  status(): Promise<StatusInfo>;
  hash(): Promise<{ hash: number }>;
  hashKV(revision: number): Promise<{ hash: number; compactRevision: number }>;
  alarm(action: 'GET' | 'ACTIVATE' | 'DEACTIVATE', memberId: string, alarm: AlarmType): Promise<{ alarms: AlarmMember[] }>;
  defragment(): Promise<void>;
  /** The whole store as a stream of bytes (etcdctl snapshot save writes them to a file). */
  snapshot(): AsyncIterable<Uint8Array>;
  moveLeader(targetId: string): Promise<void>;

  /**
   * Whether this member is a learner right now: etcd's interceptor asks on every call. Optional; without
   * it the learner flag is polled through status().
   */
  isLearner?(): boolean;

  /** The auth store (users, roles, tokens, checks); absent on stores without one. */
  readonly auth?: AuthApi;

  /** Health as etcd's /health reports it: a leader is known and no alarm is raised. */
  health(): Promise<{ health: boolean; reason: string }>;
}
