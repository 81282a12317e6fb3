// An etcd v3 client for production use, the API server's only way to its store: KV, Compact, LeaseGrant,
// Status and multiplexed watches over grpc-js, on several endpoints. A call that fails on one member moves
// the client to the next and is tried again there within the call's deadline when that cannot apply it
// twice (reads always; writes only when they never reached a member); what fails for good comes back as an
// EtcdClientError with etcd's code and message. It behaves the same against etcd 3.4 and Setpoint's store.
import { Metadata } from '@grpc/grpc-js';
import type { Client, ServiceError } from '@grpc/grpc-js';
import { pino } from 'pino';
import type { Logger } from 'pino';
import { EndpointPool } from './endpoints.js';
import type { TlsFiles } from './endpoints.js';
import { clientClosed, fromGrpc, retryable } from './errors.js';
import type { ServiceName, WireDeleteRangeResponse, WireHeader, WireLeaseGrantResponse, WirePutResponse, WireRangeResponse, WireResponseOp, WireStatusResponse, WireTxnResponse } from './proto.js';
import { prefixEnd, toBuffer, toKeyValue } from './types.js';
import type { Bytes, CallOptions, Compare, DeleteOptions, KeyValue, Op, OpResult, PutOptions, RangeOptions, RangeResult, StatusResult, TxnRequest, TxnResult } from './types.js';
import { ClientWatch } from './watch.js';
import { WatchStream } from './watch-stream.js';

export interface EtcdClientOptions {
  /** Client URLs (`http://host:port`, `https://host:port`), as --etcd-servers lists them. */
  readonly endpoints: readonly string[];
  readonly tls?: TlsFiles;
  /** Default deadline of a whole call, retries on other members included (10 s). */
  readonly callTimeoutMs?: number;
  /** How long one attempt of a read may take before the next member is asked (5 s). */
  readonly attemptTimeoutMs?: number;
  /** Largest request sent (2 MiB: etcd's 1.5 MiB request limit plus room for the envelope). */
  readonly maxSendBytes?: number;
  /** Largest message accepted (64 MiB). */
  readonly maxReceiveBytes?: number;
  /** Largest watch response put back together from fragments (64 MiB). */
  readonly maxWatchResponseBytes?: number;
  /**
   * Whether the store answers progress requests in order with events, so an answer may move watches on
   * (etcd >= 3.4.31 / 3.5.13, where etcd-io/etcd#15220 is fixed; Kubernetes relies on them only there).
   * Off by default: answers are handed on as claims (WatchBatch.requested).
   */
  readonly trustProgressRequests?: boolean;
  /** A watch whose consumer holds more than this is set aside on the server until it catches up. */
  readonly watchBufferEvents?: number;
  readonly watchBufferBytes?: number;
  readonly logger?: Logger;
}

export interface WatchOptions {
  readonly rangeEnd?: Bytes;
  readonly prefix?: boolean;
  /** Inclusive; absent or 0 = from now. */
  readonly startRevision?: number;
  readonly prevKv?: boolean;
  readonly progressNotify?: boolean;
  readonly filters?: readonly ('NOPUT' | 'NODELETE')[];
}

type Callback = (err: ServiceError | null, res?: unknown) => void;
type UnaryFn = (req: object, md: Metadata, opts: { deadline: number }, cb: Callback) => void;

/**
 * range_end for a request, or nothing: etcd tells an empty range_end that was sent ("every key from key on")
 * from one that was not (the key alone), so a single key must go without the field.
 */
function rangeEndField(key: Bytes, o: { readonly prefix?: boolean; readonly rangeEnd?: Bytes }): { rangeEnd?: Buffer } {
  const end = o.prefix ? prefixEnd(key) : o.rangeEnd !== undefined ? toBuffer(o.rangeEnd) : undefined;
  return end && end.length > 0 ? { rangeEnd: end } : {};
}

function revisionOf(h: WireHeader | null): number {
  return Number(h?.revision ?? 0);
}

function wireRange(key: Bytes, o: RangeOptions): object {
  return {
    key: toBuffer(key),
    ...rangeEndField(key, o),
    limit: String(o.limit ?? 0),
    revision: String(o.revision ?? 0),
    keysOnly: o.keysOnly ?? false,
    countOnly: o.countOnly ?? false,
    serializable: o.serializable ?? false,
    ...(o.minModRevision !== undefined ? { minModRevision: String(o.minModRevision) } : {}),
  };
}

function wirePut(key: Bytes, value: Bytes, o: PutOptions): object {
  return { key: toBuffer(key), value: toBuffer(value), lease: o.lease ?? '0', prevKv: o.prevKv ?? false };
}

function wireDelete(key: Bytes, o: DeleteOptions): object {
  return { key: toBuffer(key), ...rangeEndField(key, o), prevKv: o.prevKv ?? false };
}

function wireCompare(c: Compare): object {
  const base = { key: toBuffer(c.key), target: c.target, result: c.result };
  switch (c.target) {
    case 'VALUE':
      return { ...base, value: toBuffer(c.value) };
    case 'LEASE':
      return { ...base, lease: c.lease };
    case 'MOD':
      return { ...base, modRevision: String(c.revision) };
    case 'CREATE':
      return { ...base, createRevision: String(c.revision) };
    case 'VERSION':
      return { ...base, version: String(c.revision) };
  }
}

function wireOp(op: Op): object {
  if ('range' in op) return { requestRange: wireRange(op.range.key, op.range) };
  if ('put' in op) return { requestPut: wirePut(op.put.key, op.put.value, op.put) };
  return { requestDeleteRange: wireDelete(op.deleteRange.key, op.deleteRange) };
}

function rangeResult(r: WireRangeResponse): RangeResult {
  return { revision: revisionOf(r.header), kvs: r.kvs.map(toKeyValue), more: r.more, count: Number(r.count) };
}

function opResult(r: WireResponseOp): OpResult {
  if (r.responseRange) return { kind: 'range', range: rangeResult(r.responseRange) };
  if (r.responsePut) return r.responsePut.prevKv ? { kind: 'put', prevKv: toKeyValue(r.responsePut.prevKv) } : { kind: 'put' };
  const d = r.responseDeleteRange;
  return { kind: 'deleteRange', deleted: Number(d?.deleted ?? 0), prevKvs: (d?.prevKvs ?? []).map(toKeyValue) };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export class EtcdClient {
  private readonly pool: EndpointPool;
  private readonly watches: WatchStream;
  private readonly log: Logger;
  private readonly callTimeoutMs: number;
  private readonly attemptTimeoutMs: number;
  private readonly watchLimits: { maxBufferedEvents: number; maxBufferedBytes: number };
  /** Answers to progress requests move watches on (see EtcdClientOptions.trustProgressRequests). */
  readonly trustsProgressRequests: boolean;

  constructor(opts: EtcdClientOptions) {
    this.pool = new EndpointPool(opts.endpoints, {
      ...(opts.tls ? { tls: opts.tls } : {}),
      maxSendBytes: opts.maxSendBytes ?? 2 * 1024 * 1024,
      maxReceiveBytes: opts.maxReceiveBytes ?? 64 * 1024 * 1024,
    });
    this.log = (opts.logger ?? pino({ enabled: false })).child({ component: 'etcd-client' });
    this.callTimeoutMs = opts.callTimeoutMs ?? 10_000;
    this.attemptTimeoutMs = opts.attemptTimeoutMs ?? 5_000;
    this.watchLimits = { maxBufferedEvents: opts.watchBufferEvents ?? 10_000, maxBufferedBytes: opts.watchBufferBytes ?? 16 * 1024 * 1024 };
    this.trustsProgressRequests = opts.trustProgressRequests ?? false;
    this.watches = new WatchStream(this.pool, this.log, { maxFragmentBytes: opts.maxWatchResponseBytes ?? 64 * 1024 * 1024, trustProgressRequests: this.trustsProgressRequests });
  }

  /** The endpoint calls go to now. */
  get endpoint(): string {
    return this.pool.current().url;
  }

  get endpoints(): string[] {
    return this.pool.urls();
  }

  /** Watches this client holds, all on one stream. */
  get watchCount(): number {
    return this.watches.size;
  }

  // ---- KV ----

  async range(key: Bytes, opts: RangeOptions & CallOptions = {}): Promise<RangeResult> {
    const r = await this.unary<WireRangeResponse>('KV', 'Range', wireRange(key, opts), { idempotent: true, requireLeader: !opts.serializable, ...opts });
    return rangeResult(r);
  }

  async get(key: Bytes, opts: CallOptions = {}): Promise<KeyValue | undefined> {
    return (await this.range(key, opts)).kvs[0];
  }

  async put(key: Bytes, value: Bytes, opts: PutOptions & CallOptions = {}): Promise<{ revision: number; prevKv?: KeyValue }> {
    const r = await this.unary<WirePutResponse>('KV', 'Put', wirePut(key, value, opts), { idempotent: false, ...opts });
    return r.prevKv ? { revision: revisionOf(r.header), prevKv: toKeyValue(r.prevKv) } : { revision: revisionOf(r.header) };
  }

  async deleteRange(key: Bytes, opts: DeleteOptions & CallOptions = {}): Promise<{ revision: number; deleted: number; prevKvs: KeyValue[] }> {
    const r = await this.unary<WireDeleteRangeResponse>('KV', 'DeleteRange', wireDelete(key, opts), { idempotent: false, ...opts });
    return { revision: revisionOf(r.header), deleted: Number(r.deleted), prevKvs: r.prevKvs.map(toKeyValue) };
  }

  async txn(t: TxnRequest, opts: CallOptions = {}): Promise<TxnResult> {
    const req = { compare: t.compare.map(wireCompare), success: t.success.map(wireOp), failure: (t.failure ?? []).map(wireOp) };
    // A transaction that only reads changes nothing however often it runs.
    const readOnly = [...t.success, ...(t.failure ?? [])].every((op) => 'range' in op);
    const r = await this.unary<WireTxnResponse>('KV', 'Txn', req, { idempotent: readOnly, ...opts });
    return { revision: revisionOf(r.header), succeeded: r.succeeded, results: r.responses.map(opResult) };
  }

  /** Compacts history below `revision`; one already compacted fails with ETCD_COMPACTED. */
  async compact(revision: number, opts: { physical?: boolean } & CallOptions = {}): Promise<number> {
    const r = await this.unary<{ header: WireHeader | null }>('KV', 'Compact', { revision: String(revision), physical: opts.physical ?? false }, { idempotent: true, ...opts });
    return revisionOf(r.header);
  }

  // ---- Lease ----

  /** A new lease; an attempt that timed out may leave an unused lease behind, which expires on its own. */
  async leaseGrant(ttlSeconds: number, opts: CallOptions = {}): Promise<{ id: string; ttl: number }> {
    const r = await this.unary<WireLeaseGrantResponse>('Lease', 'LeaseGrant', { TTL: String(ttlSeconds), ID: '0' }, { idempotent: true, ...opts });
    return { id: r.ID, ttl: Number(r.TTL) };
  }

  async leaseRevoke(id: string, opts: CallOptions = {}): Promise<void> {
    await this.unary('Lease', 'LeaseRevoke', { ID: id }, { idempotent: true, ...opts });
  }

  // ---- Maintenance ----

  /** Status of one member (the one in use when none is named), asked of that member alone. */
  async status(endpoint?: string, opts: CallOptions = {}): Promise<StatusResult> {
    const urls = this.pool.urls();
    const index = endpoint === undefined ? this.pool.current().index : urls.indexOf(endpoint);
    if (index < 0) throw new Error(`etcd client: ${endpoint} is not one of ${urls.join(',')}`);
    const ep = this.pool.at(index);
    const deadline = Date.now() + (opts.timeoutMs ?? this.callTimeoutMs);
    let r: WireStatusResponse;
    try {
      r = await this.invoke<WireStatusResponse>(ep.services.Maintenance, 'Status', {}, new Metadata(), deadline);
    } catch (e) {
      throw fromGrpc(e, ep.url);
    }
    return {
      endpoint: ep.url,
      memberId: r.header?.memberId ?? '0',
      version: r.version,
      dbSize: Number(r.dbSize),
      leader: r.leader,
      raftIndex: Number(r.raftIndex),
      raftTerm: Number(r.raftTerm),
      revision: revisionOf(r.header),
      isLearner: r.isLearner,
    };
  }

  // ---- Watch ----

  /** A watch on the client's one stream; iterate it for batches, cancel() it when done. */
  watch(key: Bytes, opts: WatchOptions = {}): ClientWatch {
    const spec = {
      key: toBuffer(key),
      ...rangeEndField(key, opts),
      startRevision: opts.startRevision ?? 0,
      prevKv: opts.prevKv ?? false,
      progressNotify: opts.progressNotify ?? false,
      ...(opts.filters ? { filters: opts.filters } : {}),
    };
    const w = new ClientWatch(spec, this.watches, this.watchLimits);
    this.watches.add(w);
    return w;
  }

  /** Asks for a progress notification on every synced watch (false when no stream is open). */
  requestProgress(): boolean {
    return this.watches.requestProgress();
  }

  close(): void {
    this.watches.close();
    this.pool.close();
  }

  // ---- calls ----

  private async unary<T>(service: ServiceName, method: string, req: object, o: { idempotent: boolean; requireLeader?: boolean; timeoutMs?: number }): Promise<T> {
    const deadline = Date.now() + (o.timeoutMs ?? this.callTimeoutMs);
    const md = new Metadata();
    // A member that knows no leader refuses at once instead of holding the call: the next member is asked.
    if (o.requireLeader ?? true) md.set('hasleader', 'true');
    for (let attempt = 1; ; attempt++) {
      if (this.pool.isClosed) throw clientClosed();
      const ep = this.pool.current();
      // Only a read can be given up on and asked elsewhere; a write holds its whole deadline.
      const attemptDeadline = o.idempotent ? Math.min(deadline, Date.now() + this.attemptTimeoutMs) : deadline;
      try {
        return await this.invoke<T>(ep.services[service], method, req, md, attemptDeadline);
      } catch (raw) {
        const e = this.pool.isClosed ? clientClosed() : fromGrpc(raw, ep.url);
        if (!retryable(e, o.idempotent) || Date.now() >= deadline) throw e;
        this.pool.advance(ep);
        this.log.debug({ endpoint: ep.url, next: this.pool.current().url, method, err: e.message }, 'call failed: trying the next endpoint');
        // Once every member was asked, wait a little before the next round (a leader election takes a moment).
        if (attempt % this.pool.size === 0) await sleep(Math.min(1000, 50 * 2 ** Math.min(attempt / this.pool.size, 5), Math.max(0, deadline - Date.now())));
      }
    }
  }

  private invoke<T>(client: Client, method: string, req: object, md: Metadata, deadline: number): Promise<T> {
    const fn = (client as unknown as Record<string, UnaryFn>)[method];
    if (!fn) throw new Error(`etcd client: no method ${method}`);
    return new Promise<T>((resolve, reject) => {
      fn.call(client, req, md, { deadline }, (err, res) => (err ? reject(err) : resolve(res as T)));
    });
  }
}
