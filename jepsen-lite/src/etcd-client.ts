// A thin, typed etcd v3 client over raw gRPC (grpc-js + the project's proto/etcd), so the harness controls
// every deadline, endpoint and watch response itself — a library client would retry and reconnect for
// us and hide exactly the behaviour under test.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import path from 'node:path';
import { repoRoot } from './repo-root.js';

/** A key-value as the harness sees it: strings and numbers (our values and revisions fit both). */
export interface Kv {
  key: string;
  value: string;
  createRevision: number;
  modRevision: number;
  version: number;
  lease: string;
}

export interface WireKv {
  key: Buffer;
  value: Buffer;
  create_revision: string;
  mod_revision: string;
  version: string;
  lease: string;
}

export interface WireHeader {
  cluster_id: string;
  member_id: string;
  revision: string;
  raft_term: string;
}

export interface WireEvent {
  type: 'PUT' | 'DELETE';
  kv: WireKv | null;
  prev_kv: WireKv | null;
}

export interface WireWatchResponse {
  header: WireHeader | null;
  watch_id: string;
  created: boolean;
  canceled: boolean;
  compact_revision: string;
  cancel_reason: string;
  fragment: boolean;
  events: WireEvent[];
}

export interface Member {
  id: string;
  name: string;
  peerUrls: string[];
  clientUrls: string[];
  isLearner: boolean;
}

export type CompareSpec =
  | { key: string; target: 'VALUE'; result: 'EQUAL' | 'NOT_EQUAL'; value: string }
  | { key: string; target: 'CREATE' | 'MOD' | 'VERSION'; result: 'EQUAL' | 'GREATER' | 'LESS' | 'NOT_EQUAL'; rev: number };

export type RequestOpSpec =
  | { put: { key: string; value: string; lease?: string } }
  | { range: { key: string; prefix?: boolean } }
  | { del: { key: string } };

export interface RangeOptions {
  prefix?: boolean;
  serializable?: boolean;
  limit?: number;
  sort?: { order: 'ASCEND' | 'DESCEND'; target: 'KEY' | 'CREATE' | 'MOD' };
  maxCreateRevision?: number;
}

export interface TxnResult {
  revision: number;
  succeeded: boolean;
  /** Range results in op order (undefined for non-range ops). */
  ranges: (Kv[] | undefined)[];
}

type Unary = (req: object, md: grpc.Metadata, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r?: unknown) => void) => grpc.ClientUnaryCall;
type ServiceCtor = new (address: string, creds: grpc.ChannelCredentials, options?: grpc.ChannelOptions) => grpc.Client;

let loaded: Record<string, ServiceCtor> | undefined;

function services(): Record<string, ServiceCtor> {
  if (loaded) return loaded;
  // The wire contract only (proto/etcd), as any etcd client would load it — never the server's code.
  const def = protoLoader.loadSync('rpc.proto', {
    includeDirs: [path.join(repoRoot(), 'proto', 'etcd')],
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(def)['etcdserverpb'] as unknown as Record<string, ServiceCtor>;
  loaded = pkg;
  return pkg;
}

/** Fast reconnects (the default backoff grows to two minutes, longer than a fault) and keepalive
 * pings just above etcd's 5 s enforcement floor, so a paused member's streams are noticed. */
const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.min_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1000,
  'grpc.keepalive_time_ms': 6000,
  'grpc.keepalive_timeout_ms': 3000,
  'grpc.enable_retries': 0,
};

export function toKv(w: WireKv): Kv {
  return {
    key: w.key.toString(),
    value: w.value.toString(),
    createRevision: Number(w.create_revision),
    modRevision: Number(w.mod_revision),
    version: Number(w.version),
    lease: w.lease,
  };
}

/** The text a gRPC failure is recorded with in histories: code name plus etcd's message. */
export function errorText(e: unknown): string {
  if (e && typeof e === 'object' && 'code' in e && typeof (e as grpc.ServiceError).code === 'number') {
    const se = e as grpc.ServiceError;
    return `${grpc.status[se.code] ?? se.code}: ${se.details}`;
  }
  return e instanceof Error ? e.message : String(e);
}

/** Errors after which a write is known NOT to have happened: the request never left the client or was
 * refused before proposal. Everything else (timeouts, lost connections, leader changes) is ambiguous. */
export function isDefiniteFailure(e: unknown): boolean {
  if (!(e && typeof e === 'object' && 'code' in e)) return false;
  const se = e as grpc.ServiceError;
  if (se.code === grpc.status.UNAVAILABLE && /No connection established|ECONNREFUSED|connect ECONN/i.test(se.details)) return true;
  return se.code === grpc.status.INVALID_ARGUMENT || se.code === grpc.status.FAILED_PRECONDITION;
}

function prefixEnd(key: string): Buffer {
  const b = Buffer.from(key);
  for (let i = b.length - 1; i >= 0; i--) {
    if (b[i]! < 0xff) {
      const end = Buffer.from(b.subarray(0, i + 1));
      end[i] = b[i]! + 1;
      return end;
    }
  }
  return Buffer.from([0]);
}

function wireCompare(c: CompareSpec): object {
  const base = { key: Buffer.from(c.key), target: c.target, result: c.result };
  if (c.target === 'VALUE') return { ...base, value: Buffer.from(c.value) };
  const field = c.target === 'CREATE' ? 'create_revision' : c.target === 'MOD' ? 'mod_revision' : 'version';
  return { ...base, [field]: String(c.rev) };
}

function wireOp(op: RequestOpSpec): object {
  if ('put' in op) return { request_put: { key: Buffer.from(op.put.key), value: Buffer.from(op.put.value), lease: op.put.lease ?? '0' } };
  if ('range' in op) {
    return { request_range: { key: Buffer.from(op.range.key), ...(op.range.prefix ? { range_end: prefixEnd(op.range.key) } : {}) } };
  }
  return { request_delete_range: { key: Buffer.from(op.del.key) } };
}

export class EtcdClient {
  private readonly kv: grpc.Client;
  private readonly watchSvc: grpc.Client;
  private readonly lease: grpc.Client;
  private readonly cluster: grpc.Client;
  private readonly maint: grpc.Client;

  constructor(readonly endpoint: string) {
    const s = services();
    const creds = grpc.credentials.createInsecure();
    // One channel per client object: its services share it.
    this.kv = new s['KV']!(endpoint, creds, CHANNEL_OPTIONS);
    const channelOverride = this.kv.getChannel();
    const opts = { ...CHANNEL_OPTIONS, channelOverride } as grpc.ChannelOptions;
    this.watchSvc = new s['Watch']!(endpoint, creds, opts);
    this.lease = new s['Lease']!(endpoint, creds, opts);
    this.cluster = new s['Cluster']!(endpoint, creds, opts);
    this.maint = new s['Maintenance']!(endpoint, creds, opts);
  }

  private call<T>(svc: grpc.Client, method: string, req: object, timeoutMs: number, md = new grpc.Metadata()): Promise<T> {
    const fn = (svc as unknown as Record<string, Unary>)[method]!;
    return new Promise((resolve, reject) => {
      fn.call(svc, req, md, { deadline: Date.now() + timeoutMs }, (e, r) => (e ? reject(e) : resolve(r as T)));
    });
  }

  async range(key: string, o: RangeOptions, timeoutMs: number): Promise<{ revision: number; kvs: Kv[]; count: number }> {
    const req = {
      key: Buffer.from(key),
      ...(o.prefix ? { range_end: prefixEnd(key) } : {}),
      limit: String(o.limit ?? 0),
      serializable: o.serializable ?? false,
      sort_order: o.sort?.order ?? 'NONE',
      sort_target: o.sort?.target ?? 'KEY',
      max_create_revision: String(o.maxCreateRevision ?? 0),
    };
    const r = await this.call<{ header: WireHeader; kvs: WireKv[]; count: string }>(this.kv, 'Range', req, timeoutMs);
    return { revision: Number(r.header.revision), kvs: r.kvs.map(toKv), count: Number(r.count) };
  }

  async put(key: string, value: string, timeoutMs: number, lease = '0'): Promise<{ revision: number }> {
    const r = await this.call<{ header: WireHeader }>(this.kv, 'Put', { key: Buffer.from(key), value: Buffer.from(value), lease }, timeoutMs);
    return { revision: Number(r.header.revision) };
  }

  async del(key: string, timeoutMs: number, prefix = false): Promise<{ revision: number; deleted: number }> {
    // An empty range_end must be left out, not sent as empty bytes (observed to widen the range).
    const req = { key: Buffer.from(key), ...(prefix ? { range_end: prefixEnd(key) } : {}) };
    const r = await this.call<{ header: WireHeader; deleted: string }>(this.kv, 'DeleteRange', req, timeoutMs);
    return { revision: Number(r.header.revision), deleted: Number(r.deleted) };
  }

  async txn(compare: CompareSpec[], success: RequestOpSpec[], failure: RequestOpSpec[], timeoutMs: number): Promise<TxnResult> {
    const req = { compare: compare.map(wireCompare), success: success.map(wireOp), failure: failure.map(wireOp) };
    const r = await this.call<{ header: WireHeader; succeeded: boolean; responses: { response_range?: { kvs: WireKv[] } | null }[] }>(
      this.kv,
      'Txn',
      req,
      timeoutMs,
    );
    return {
      revision: Number(r.header.revision),
      succeeded: r.succeeded,
      ranges: r.responses.map((x) => (x.response_range ? x.response_range.kvs.map(toKv) : undefined)),
    };
  }

  async leaseGrant(ttlSeconds: number, timeoutMs: number): Promise<string> {
    const r = await this.call<{ ID: string; error: string }>(this.lease, 'LeaseGrant', { TTL: String(ttlSeconds), ID: '0' }, timeoutMs);
    if (r.error) throw new Error(r.error);
    return r.ID;
  }

  async leaseRevoke(id: string, timeoutMs: number): Promise<void> {
    await this.call(this.lease, 'LeaseRevoke', { ID: id }, timeoutMs);
  }

  /** The raw LeaseKeepAlive stream; the caller writes `{ID}` and reads `{ID, TTL}`. */
  keepAliveStream(): grpc.ClientDuplexStream<{ ID: string }, { ID: string; TTL: string }> {
    const fn = (this.lease as unknown as Record<string, (md?: grpc.Metadata) => grpc.ClientDuplexStream<{ ID: string }, { ID: string; TTL: string }>>)['LeaseKeepAlive']!;
    return fn.call(this.lease);
  }

  /** The raw Watch stream. `requireLeader` sets etcd's `hasleader` metadata: the member then cancels
   * the stream when it loses its leader, which exercises resumption. */
  watchStream(requireLeader: boolean): grpc.ClientDuplexStream<object, WireWatchResponse> {
    const md = new grpc.Metadata();
    if (requireLeader) md.set('hasleader', 'true');
    const fn = (this.watchSvc as unknown as Record<string, (md: grpc.Metadata) => grpc.ClientDuplexStream<object, WireWatchResponse>>)['Watch']!;
    return fn.call(this.watchSvc, md);
  }

  async memberList(timeoutMs: number): Promise<Member[]> {
    const r = await this.call<{ members: WireMember[] }>(this.cluster, 'MemberList', {}, timeoutMs);
    return r.members.map(toMember);
  }

  async memberAdd(peerUrl: string, isLearner: boolean, timeoutMs: number): Promise<Member> {
    const r = await this.call<{ member: WireMember }>(this.cluster, 'MemberAdd', { peerURLs: [peerUrl], isLearner }, timeoutMs);
    return toMember(r.member);
  }

  async memberRemove(id: string, timeoutMs: number): Promise<void> {
    await this.call(this.cluster, 'MemberRemove', { ID: id }, timeoutMs);
  }

  async memberPromote(id: string, timeoutMs: number): Promise<void> {
    await this.call(this.cluster, 'MemberPromote', { ID: id }, timeoutMs);
  }

  async status(timeoutMs: number): Promise<{ memberId: string; leader: string; revision: number; raftIndex: number; appliedIndex: number; isLearner: boolean }> {
    const r = await this.call<{ header: WireHeader; leader: string; raftIndex: string; raftAppliedIndex: string; isLearner: boolean }>(
      this.maint,
      'Status',
      {},
      timeoutMs,
    );
    return {
      memberId: r.header.member_id,
      leader: r.leader,
      revision: Number(r.header.revision),
      raftIndex: Number(r.raftIndex),
      appliedIndex: Number(r.raftAppliedIndex),
      isLearner: r.isLearner,
    };
  }

  async hashKV(revision: number, timeoutMs: number): Promise<{ hash: number; revision: number; compactRevision: number }> {
    const r = await this.call<{ header: WireHeader; hash: number; compact_revision: string }>(this.maint, 'HashKV', { revision: String(revision) }, timeoutMs);
    return { hash: r.hash, revision: Number(r.header.revision), compactRevision: Number(r.compact_revision) };
  }

  close(): void {
    this.kv.close();
  }
}

interface WireMember {
  ID: string;
  name: string;
  peerURLs: string[];
  clientURLs: string[];
  isLearner: boolean;
}

function toMember(m: WireMember): Member {
  return { id: m.ID, name: m.name, peerUrls: m.peerURLs, clientUrls: m.clientURLs, isLearner: m.isLearner };
}

export { prefixEnd };
