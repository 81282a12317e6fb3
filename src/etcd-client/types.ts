// What the client's callers see: keys and values as bytes, revisions as numbers (they stay far below 2^53),
// lease ids as decimal strings (random 63-bit values that a double would round), and the request shapes.
import type { WireKeyValue } from './proto.js';

export type Bytes = string | Uint8Array;

export interface KeyValue {
  readonly key: Buffer;
  readonly value: Buffer;
  readonly createRevision: number;
  readonly modRevision: number;
  readonly version: number;
  /** '0' when the key has no lease. */
  readonly lease: string;
}

export interface RangeOptions {
  /** [key, rangeEnd); '\0' means every key from key on. */
  readonly rangeEnd?: Bytes;
  /** Every key that starts with key (rangeEnd computed). */
  readonly prefix?: boolean;
  readonly limit?: number;
  /** Read at this revision (0: the latest). */
  readonly revision?: number;
  readonly keysOnly?: boolean;
  readonly countOnly?: boolean;
  /** Served by the member asked, without a quorum: may be stale. */
  readonly serializable?: boolean;
  /** Only keys last written at or after this revision (etcd filters before the limit, not before count). */
  readonly minModRevision?: number;
}

export interface RangeResult {
  readonly revision: number;
  readonly kvs: KeyValue[];
  readonly more: boolean;
  readonly count: number;
}

export interface PutOptions {
  readonly lease?: string;
  readonly prevKv?: boolean;
}

export interface DeleteOptions {
  readonly rangeEnd?: Bytes;
  readonly prefix?: boolean;
  readonly prevKv?: boolean;
}

export type CompareResult = 'EQUAL' | 'GREATER' | 'LESS' | 'NOT_EQUAL';

export type Compare =
  | { readonly key: Bytes; readonly target: 'MOD' | 'CREATE' | 'VERSION'; readonly result: CompareResult; readonly revision: number }
  | { readonly key: Bytes; readonly target: 'VALUE'; readonly result: CompareResult; readonly value: Bytes }
  | { readonly key: Bytes; readonly target: 'LEASE'; readonly result: CompareResult; readonly lease: string };

export type Op =
  | { readonly range: { readonly key: Bytes } & RangeOptions }
  | { readonly put: { readonly key: Bytes; readonly value: Bytes } & PutOptions }
  | { readonly deleteRange: { readonly key: Bytes } & DeleteOptions };

export interface TxnRequest {
  readonly compare: readonly Compare[];
  readonly success: readonly Op[];
  readonly failure?: readonly Op[];
}

/** One result per op of the branch that ran, in order. */
export type OpResult =
  | { readonly kind: 'range'; readonly range: RangeResult }
  | { readonly kind: 'put'; readonly prevKv?: KeyValue }
  | { readonly kind: 'deleteRange'; readonly deleted: number; readonly prevKvs: KeyValue[] };

export interface TxnResult {
  readonly revision: number;
  readonly succeeded: boolean;
  readonly results: OpResult[];
}

export interface StatusResult {
  readonly endpoint: string;
  readonly memberId: string;
  readonly version: string;
  readonly dbSize: number;
  readonly leader: string;
  readonly raftIndex: number;
  readonly raftTerm: number;
  readonly revision: number;
  readonly isLearner: boolean;
}

export interface CallOptions {
  /** The whole call, retries included (default: the client's callTimeoutMs). */
  readonly timeoutMs?: number;
}

export function toBuffer(b: Bytes): Buffer {
  return typeof b === 'string' ? Buffer.from(b) : Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/** The end of the range of keys starting with `key`: its last byte below 0xff plus one (etcd's GetPrefixRangeEnd). */
export function prefixEnd(key: Bytes): Buffer {
  const b = toBuffer(key);
  for (let i = b.length - 1; i >= 0; i--) {
    const byte = b[i] as number;
    if (byte < 0xff) {
      const end = Buffer.from(b.subarray(0, i + 1));
      end[i] = byte + 1;
      return end;
    }
  }
  // Every byte 0xff (or no key): everything from key on.
  return Buffer.from([0]);
}

export function toKeyValue(w: WireKeyValue): KeyValue {
  return {
    key: w.key,
    value: w.value,
    createRevision: Number(w.createRevision),
    modRevision: Number(w.modRevision),
    version: Number(w.version),
    lease: w.lease,
  };
}
