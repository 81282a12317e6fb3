// What goes into the Raft log: every client write and cluster operation is one entry holding one
// internal request. Puts and txns, the writes every member decodes most, have binary layouts (below, and
// member/txn-layout.ts); every other request is msgpack. The id ties the applied result back to the waiting
// caller on the member that proposed it.
//
// The write-ahead log keeps entries as they are, so these are on-disk formats, frozen (with samples of every
// kind) by test/server/member/record-formats.test.ts, under the storage format version (src/storage/records.ts
// FORMAT_VERSION, 3 now). Version rule: a new request kind, a new tag byte or a new msgpack field that
// readers may go without needs no new version, since old entries still decode the same (but no member may
// propose it before every member reads it, and there is no cluster version to tell yet: upgrade them all
// first); changing what an existing tag or kind holds, or what a field means, needs a new storage version,
// and entries of the old one must still decode, or their directories be refused.
import { pack, unpack } from 'msgpackr';
import type { DeleteRangeRequest, PutRequest, TxnRequest } from '../../kv/types.js';
import type { AlarmType } from './store-api.js';
import type { ClusterMember } from './membership.js';
import type { AuthOp } from '../auth/auth-state.js';
import { NotInLayout, decodeTxnEntry, encodeTxnEntry } from './txn-layout.js';

export type InternalRequest =
  | { readonly t: 'put'; readonly id: string; readonly req: PutRequest }
  | { readonly t: 'deleteRange'; readonly id: string; readonly req: DeleteRangeRequest }
  | { readonly t: 'txn'; readonly id: string; readonly req: TxnRequest }
  | { readonly t: 'compact'; readonly id: string; readonly revision: number }
  | { readonly t: 'leaseGrant'; readonly id: string; readonly lease: string; readonly ttl: number }
  | { readonly t: 'leaseRevoke'; readonly id: string; readonly lease: string }
  | { readonly t: 'alarm'; readonly id: string; readonly action: 'ACTIVATE' | 'DEACTIVATE'; readonly memberId: string; readonly alarm: AlarmType }
  /** A member publishes its name and client URLs once it runs (etcd's publish). */
  | { readonly t: 'memberAttr'; readonly id: string; readonly memberId: string; readonly name: string; readonly clientURLs: readonly string[] }
  | { readonly t: 'memberUpdate'; readonly id: string; readonly memberId: string; readonly peerURLs: readonly string[] }
  /** A change to users, roles or the enabled flag, by `user` (checked for the root role as it applies, as etcd). */
  | AuthChange
  /** A password checked before proposing; applying it issues the simple token "<prefix>.<index>" on every member. */
  | { readonly t: 'authenticate'; readonly id: string; readonly name: string; readonly prefix: string }
  /**
   * A KV write (or lease revocation) proposed while auth is enabled, with its caller: applying it first checks
   * the caller's permissions and auth revision against the auth state as of that entry (etcd's request header
   * username and auth_revision). With auth disabled, writes are proposed bare, in their binary layouts.
   */
  | AsUser;

export interface AuthChange {
  readonly t: 'auth';
  readonly id: string;
  readonly op: AuthOp;
  readonly user: string;
  readonly authRev: number;
}

export interface AsUser {
  readonly t: 'asUser';
  readonly id: string;
  readonly user: string;
  readonly authRev: number;
  readonly req: InternalRequest;
}

/**
 * A put, the most common entry by far, has a fixed binary layout instead of msgpack (a third of the time
 * to encode and decode): this tag byte (msgpack encodes a request, a map, from 0x80 up, so entries written
 * before the layout existed still decode), a flags byte, the id (u8 length), the key (u32 length), then the
 * value (u32 length) and the lease (u8 length, decimal) when their flags say they are there. Key and value
 * decode as views into the entry.
 */
const PUT_TAG = 0x01;
const F_PREV_KV = 1;
const F_IGNORE_VALUE = 2;
const F_IGNORE_LEASE = 4;
const F_VALUE = 8;
const F_LEASE = 16;

function encodePut(id: string, p: PutRequest): Uint8Array {
  const value = p.value;
  const lease = p.lease;
  const flags =
    (p.prevKv ? F_PREV_KV : 0) | (p.ignoreValue ? F_IGNORE_VALUE : 0) | (p.ignoreLease ? F_IGNORE_LEASE : 0) | (value ? F_VALUE : 0) | (lease !== undefined ? F_LEASE : 0);
  const size = 2 + 1 + id.length + 4 + p.key.length + (value ? 4 + value.length : 0) + (lease !== undefined ? 1 + lease.length : 0);
  const b = Buffer.allocUnsafe(size);
  b[0] = PUT_TAG;
  b[1] = flags;
  b[2] = id.length;
  let at = 3 + b.write(id, 3, 'latin1');
  b.writeUInt32BE(p.key.length, at);
  b.set(p.key, at + 4);
  at += 4 + p.key.length;
  if (value) {
    b.writeUInt32BE(value.length, at);
    b.set(value, at + 4);
    at += 4 + value.length;
  }
  if (lease !== undefined) {
    b[at] = lease.length;
    b.write(lease, at + 1, 'latin1');
  }
  return b;
}

function decodePut(data: Uint8Array): InternalRequest {
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const flags = b[1] as number;
  const idLen = b[2] as number;
  const id = b.toString('latin1', 3, 3 + idLen);
  let at = 3 + idLen;
  const keyLen = b.readUInt32BE(at);
  const key = b.subarray(at + 4, at + 4 + keyLen);
  at += 4 + keyLen;
  let value: Buffer | undefined;
  if (flags & F_VALUE) {
    const n = b.readUInt32BE(at);
    value = b.subarray(at + 4, at + 4 + n);
    at += 4 + n;
  }
  const lease = flags & F_LEASE ? b.toString('latin1', at + 1, at + 1 + (b[at] as number)) : undefined;
  // One shape for every put (absent fields undefined, flags false), so the apply path sees one hidden class.
  // (A field that is there but undefined reads as absent everywhere; msgpack decodes such fields too.)
  const req = {
    key,
    value,
    lease,
    prevKv: (flags & F_PREV_KV) !== 0,
    ignoreValue: (flags & F_IGNORE_VALUE) !== 0,
    ignoreLease: (flags & F_IGNORE_LEASE) !== 0,
  } as PutRequest;
  return { t: 'put', id, req };
}

/** A txn has its own binary layout too (member/txn-layout.ts), after this tag. */
const TXN_TAG = 0x02;

export function encodeRequest(r: InternalRequest): Uint8Array {
  // The layout's one-byte lengths bound the id and the lease (a decimal int64): anything else is msgpack.
  if (r.t === 'put' && r.id.length < 256 && (r.req.lease === undefined || r.req.lease.length < 256)) return encodePut(r.id, r.req);
  if (r.t === 'txn') {
    try {
      return encodeTxnEntry(TXN_TAG, r.id, r.req);
    } catch (e) {
      if (!(e instanceof NotInLayout)) throw e;
    }
  }
  return pack(r);
}

export function decodeRequest(data: Uint8Array): InternalRequest {
  if (data[0] === PUT_TAG) return decodePut(data);
  if (data[0] === TXN_TAG) return { t: 'txn', ...decodeTxnEntry(data) };
  return unpack(data) as InternalRequest;
}

/** What a membership change carries in its ConfChange context: the member, and the waiting caller. */
export interface ConfChangeContext {
  readonly reqId: string;
  readonly member: ClusterMember;
}

export function encodeConfChangeContext(c: ConfChangeContext): Uint8Array {
  return pack(c);
}

export function decodeConfChangeContext(data: Uint8Array): ConfChangeContext {
  return unpack(data) as ConfChangeContext;
}
