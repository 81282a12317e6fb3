// The etcd v3 messages as @grpc/proto-loader hands them to us and takes them back (v3rpc/etcd-proto.ts): camelCase
// fields, int64/uint64 as decimal strings on the way in (numbers or strings on the way out), enums by name,
// a oneof named by its virtual field. Requests are parsed into the kv layer's types here, at the edge;
// responses are built from them. Nothing else in the server touches wire shapes.
import type {
  Compare,
  CompareResult,
  CompareTarget,
  DeleteRangeRequest,
  KeyValue,
  KvEvent,
  PutRequest,
  RangeRequest,
  RequestOp,
  ResponseOp,
  SortOrder,
  SortTarget,
  TxnRequest,
} from '../../kv/types.js';
import type { Header, StoreApi } from '../member/store-api.js';

/** int64/uint64 as decoded (longs: String). */
export type Long = string;
/** int64/uint64 as we encode them: numbers while they are safe integers, decimal strings for ids. */
export type LongOut = number | string;

export interface WireHeader {
  readonly clusterId?: LongOut;
  readonly memberId?: LongOut;
  readonly revision: LongOut;
  readonly raftTerm?: LongOut;
}

export interface WireKeyValue {
  readonly key: Uint8Array;
  readonly createRevision: LongOut;
  readonly modRevision: LongOut;
  readonly version: LongOut;
  readonly value: Uint8Array;
  readonly lease: LongOut;
}

// ---- requests, as decoded ----

export interface WireRangeRequest {
  readonly key: Buffer;
  readonly rangeEnd: Buffer;
  readonly limit: Long;
  readonly revision: Long;
  readonly sortOrder: string | number;
  readonly sortTarget: string | number;
  readonly serializable: boolean;
  readonly keysOnly: boolean;
  readonly countOnly: boolean;
  readonly minModRevision: Long;
  readonly maxModRevision: Long;
  readonly minCreateRevision: Long;
  readonly maxCreateRevision: Long;
}

export interface WirePutRequest {
  readonly key: Buffer;
  readonly value: Buffer;
  readonly lease: Long;
  readonly prevKv: boolean;
  readonly ignoreValue: boolean;
  readonly ignoreLease: boolean;
}

export interface WireDeleteRangeRequest {
  readonly key: Buffer;
  readonly rangeEnd: Buffer;
  readonly prevKv: boolean;
}

export interface WireCompare {
  readonly result: string | number;
  readonly target: string | number;
  readonly key: Buffer;
  readonly rangeEnd: Buffer;
  readonly version?: Long;
  readonly createRevision?: Long;
  readonly modRevision?: Long;
  readonly value?: Buffer;
  readonly lease?: Long;
}

export interface WireRequestOp {
  readonly requestRange?: WireRangeRequest;
  readonly requestPut?: WirePutRequest;
  readonly requestDeleteRange?: WireDeleteRangeRequest;
  readonly requestTxn?: WireTxnRequest;
}

export interface WireTxnRequest {
  readonly compare: readonly WireCompare[];
  readonly success: readonly WireRequestOp[];
  readonly failure: readonly WireRequestOp[];
}

// ---- parsing ----

/** An int64 that holds a revision, count or TTL: exact as a JS number well past any real value. */
export function num(v: Long | number | undefined): number {
  return v === undefined ? 0 : Number(v);
}

/** An enum by name, or `dflt` for a number the proto does not define (proto3 keeps unknown values). */
function enumName<T extends string>(v: string | number, names: readonly T[], dflt: T): T {
  return typeof v === 'string' && (names as readonly string[]).includes(v) ? (v as T) : dflt;
}

const SORT_ORDERS: readonly SortOrder[] = ['NONE', 'ASCEND', 'DESCEND'];
const SORT_TARGETS: readonly SortTarget[] = ['KEY', 'VERSION', 'CREATE', 'MOD', 'VALUE'];
const COMPARE_RESULTS: readonly CompareResult[] = ['EQUAL', 'GREATER', 'LESS', 'NOT_EQUAL'];
const COMPARE_TARGETS: readonly CompareTarget[] = ['VERSION', 'CREATE', 'MOD', 'VALUE', 'LEASE'];

export function parseRange(r: WireRangeRequest): RangeRequest {
  return {
    key: r.key,
    rangeEnd: r.rangeEnd,
    limit: num(r.limit),
    revision: num(r.revision),
    sortOrder: enumName(r.sortOrder, SORT_ORDERS, 'NONE'),
    sortTarget: enumName(r.sortTarget, SORT_TARGETS, 'KEY'),
    serializable: r.serializable,
    keysOnly: r.keysOnly,
    countOnly: r.countOnly,
    minModRevision: num(r.minModRevision),
    maxModRevision: num(r.maxModRevision),
    minCreateRevision: num(r.minCreateRevision),
    maxCreateRevision: num(r.maxCreateRevision),
  };
}

export function parsePut(r: WirePutRequest): PutRequest {
  return { key: r.key, value: r.value, lease: r.lease, prevKv: r.prevKv, ignoreValue: r.ignoreValue, ignoreLease: r.ignoreLease };
}

export function parseDeleteRange(r: WireDeleteRangeRequest): DeleteRangeRequest {
  return { key: r.key, rangeEnd: r.rangeEnd, prevKv: r.prevKv };
}

function parseCompare(c: WireCompare): Compare {
  const base = {
    result: enumName(c.result, COMPARE_RESULTS, 'EQUAL'),
    target: enumName(c.target, COMPARE_TARGETS, 'VERSION'),
    key: c.key,
    rangeEnd: c.rangeEnd,
  };
  // The target names which member of target_union is compared; an unset member compares as zero.
  switch (base.target) {
    case 'VERSION':
      return { ...base, version: num(c.version) };
    case 'CREATE':
      return { ...base, createRevision: num(c.createRevision) };
    case 'MOD':
      return { ...base, modRevision: num(c.modRevision) };
    case 'VALUE':
      return { ...base, value: c.value ?? Buffer.alloc(0) };
    case 'LEASE':
      return { ...base, lease: c.lease ?? '0' };
  }
}

function parseOp(op: WireRequestOp): RequestOp {
  if (op.requestRange) return { requestRange: parseRange(op.requestRange) };
  if (op.requestPut) return { requestPut: parsePut(op.requestPut) };
  if (op.requestDeleteRange) return { requestDeleteRange: parseDeleteRange(op.requestDeleteRange) };
  if (op.requestTxn) return { requestTxn: parseTxn(op.requestTxn) };
  // An op with nothing in it: the store rejects it (KEY_NOT_FOUND) at the point etcd's check would.
  return {} as RequestOp;
}

export function parseTxn(r: WireTxnRequest): TxnRequest {
  return { compare: r.compare.map(parseCompare), success: r.success.map(parseOp), failure: r.failure.map(parseOp) };
}

/** A txn made only of ranges is served without Raft in etcd, so no size limit applies to it. */
export function isTxnReadOnly(r: WireTxnRequest): boolean {
  const ro = (op: WireRequestOp): boolean => (op.requestTxn ? isTxnReadOnly(op.requestTxn) : !op.requestPut && !op.requestDeleteRange);
  return r.success.every(ro) && r.failure.every(ro);
}

// ---- responses ----

/** A full header: the member's ids and term, and the revision of this response. */
export function wireHeader(h: Header, revision: number): WireHeader {
  return { clusterId: h.clusterId, memberId: h.memberId, revision, raftTerm: h.raftTerm };
}

/** A full header at the member's current revision (responses that are not about a revision of their own). */
export function currentHeader(store: StoreApi): WireHeader {
  const h = store.header();
  return wireHeader(h, h.revision);
}

export function wireKv(kv: KeyValue): WireKeyValue {
  return {
    key: kv.key,
    createRevision: kv.createRevision,
    modRevision: kv.modRevision,
    version: kv.version,
    value: kv.value,
    lease: kv.lease,
  };
}

export function wireEvent(ev: KvEvent): { type: string; kv: WireKeyValue; prevKv?: WireKeyValue } {
  return ev.prevKv ? { type: ev.type, kv: wireKv(ev.kv), prevKv: wireKv(ev.prevKv) } : { type: ev.type, kv: wireKv(ev.kv) };
}

/**
 * A txn's per-op responses. Their headers carry only the revision the store gave them, as etcd's do
 * (cluster_id, member_id and raft_term are filled in on the outer response only).
 */
export function wireResponseOp(op: ResponseOp): object {
  if ('responseRange' in op) {
    const r = op.responseRange;
    return { responseRange: { header: { revision: r.header.revision }, kvs: r.kvs.map(wireKv), more: r.more, count: r.count } };
  }
  if ('responsePut' in op) {
    const r = op.responsePut;
    return { responsePut: { header: { revision: r.header.revision }, ...(r.prevKv ? { prevKv: wireKv(r.prevKv) } : {}) } };
  }
  if ('responseDeleteRange' in op) {
    const r = op.responseDeleteRange;
    return { responseDeleteRange: { header: { revision: r.header.revision }, deleted: r.deleted, prevKvs: r.prevKvs.map(wireKv) } };
  }
  const r = op.responseTxn;
  return { responseTxn: { header: { revision: r.header.revision }, succeeded: r.succeeded, responses: r.responses.map(wireResponseOp) } };
}
