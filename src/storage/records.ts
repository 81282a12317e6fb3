// How values are laid out on disk. Every value starts with a CRC-32 over its key and the rest of the value:
// LevelDB does not verify table checksums on ordinary reads, and a value that lands under the wrong key
// (or a flipped bit in one) must be reported, not served to the core.
//
// Log entries — the hot, high-volume records — use a fixed binary layout: [crc u32][type u8][term u64][data].
// No field tags, no per-entry allocation beyond the value itself, and the data is copied verbatim. The index
// lives only in the key (big-endian, so the log sorts in order). Metadata records are small and written at
// most once per Ready, so they are msgpack: self-describing, which lets a later format add a field without
// a new layout. Decoding parses into typed values here, at the edge; anything malformed is a BadRecord.
import { crc32 } from 'node:zlib';
import { pack, unpack } from 'msgpackr';
import type { ConfState, Entry, EntryType, HardState, NodeId } from '../raft/types.js';

/** A value that does not decode: the caller names the key and the directory. */
export class BadRecord extends Error {}

const CRC_BYTES = 4;
const ENTRY_HEADER = CRC_BYTES + 1 + 8;
const TWO_32 = 2 ** 32;

function checksum(key: Uint8Array, body: Uint8Array): number {
  return crc32(body, crc32(key));
}

function verify(key: Uint8Array, value: Uint8Array): Buffer {
  const b = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (b.length < CRC_BYTES) throw new BadRecord(`value of ${b.length} bytes is too short`);
  if (b.readUInt32BE(0) !== checksum(key, b.subarray(CRC_BYTES))) throw new BadRecord('checksum mismatch');
  return b;
}

const ENTRY_TYPES: readonly EntryType[] = ['normal', 'confChange'];

export function sealEntry(key: Uint8Array, e: Entry): Uint8Array {
  const b = Buffer.allocUnsafe(ENTRY_HEADER + e.data.length);
  b[CRC_BYTES] = e.type === 'normal' ? 0 : 1;
  b.writeUInt32BE(Math.floor(e.term / TWO_32), CRC_BYTES + 1);
  b.writeUInt32BE(e.term >>> 0, CRC_BYTES + 5);
  b.set(e.data, ENTRY_HEADER);
  b.writeUInt32BE(checksum(key, b.subarray(CRC_BYTES)), 0);
  return b;
}

export function openEntry(key: Uint8Array, index: number, value: Uint8Array): Entry {
  const b = verify(key, value);
  if (b.length < ENTRY_HEADER) throw new BadRecord(`entry of ${b.length} bytes is shorter than its header`);
  const type = ENTRY_TYPES[b[CRC_BYTES] as number];
  if (type === undefined) throw new BadRecord(`unknown entry type ${b[CRC_BYTES]}`);
  const term = b.readUInt32BE(CRC_BYTES + 1) * TWO_32 + b.readUInt32BE(CRC_BYTES + 5);
  // A view, not a copy: LevelDB hands each value its own buffer.
  return { index, term, type, data: b.subarray(ENTRY_HEADER) };
}

export function sealBytes(key: Uint8Array, payload: Uint8Array): Uint8Array {
  const b = Buffer.allocUnsafe(CRC_BYTES + payload.length);
  b.set(payload, CRC_BYTES);
  b.writeUInt32BE(checksum(key, b.subarray(CRC_BYTES)), 0);
  return b;
}

export function openBytes(key: Uint8Array, value: Uint8Array): Uint8Array {
  return verify(key, value).subarray(CRC_BYTES);
}

function openMeta(key: Uint8Array, value: Uint8Array): Record<string, unknown> {
  let raw: unknown;
  try {
    raw = unpack(openBytes(key, value));
  } catch (e) {
    if (e instanceof BadRecord) throw e;
    throw new BadRecord(`undecodable msgpack (${e instanceof Error ? e.message : String(e)})`);
  }
  if (!isRecord(raw)) throw new BadRecord('not a record');
  return raw;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Parses one field of a metadata record, or throws BadRecord naming it. */
type FieldParser<T> = (v: unknown, field: string) => T;

const uint: FieldParser<number> = (v, field) => {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new BadRecord(`field '${field}' is not a non-negative integer`);
  return v;
};

const text: FieldParser<string> = (v, field) => {
  if (typeof v !== 'string') throw new BadRecord(`field '${field}' is not a string`);
  return v;
};

const ids: FieldParser<NodeId[]> = (v, field) => {
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'number' && Number.isSafeInteger(x) && x > 0)) {
    throw new BadRecord(`field '${field}' is not a list of node ids`);
  }
  return v as NodeId[];
};

const confState: FieldParser<ConfState> = (v, field) => {
  if (!isRecord(v)) throw new BadRecord(`field '${field}' is not a record`);
  return { voters: ids(v.voters, `${field}.voters`), learners: ids(v.learners, `${field}.learners`) };
};

/** Seals and opens one kind of metadata record; only the listed fields are written or read. */
export interface MetaCodec<T> {
  seal(key: Uint8Array, value: T): Uint8Array;
  open(key: Uint8Array, value: Uint8Array): T;
}

function metaCodec<T extends object>(fields: { readonly [K in keyof T]: FieldParser<T[K]> }): MetaCodec<T> {
  const names = Object.keys(fields) as Array<keyof T & string>;
  return {
    seal(key, value) {
      const out: Record<string, unknown> = {};
      for (const n of names) out[n] = value[n];
      return sealBytes(key, pack(out));
    },
    open(key, value) {
      const r = openMeta(key, value);
      const out: Record<string, unknown> = {};
      for (const n of names) out[n] = fields[n](r[n], n);
      return out as T;
    },
  };
}

export const FORMAT_MAGIC = 'setpoint-raft';
export const FORMAT_VERSION = 1;

/** Written once at creation: says "this is Setpoint raft data, format N". */
export const formatCodec = metaCodec<{ magic: string; version: number }>({ magic: text, version: uint });

export const hardStateCodec = metaCodec<HardState>({ term: uint, vote: uint, commit: uint });

export const confStateCodec = metaCodec<ConfState>({ voters: ids, learners: ids });

/** The entry just before the first kept one: the log's anchor after compaction or a snapshot. */
export interface LogStart {
  readonly index: number;
  readonly term: number;
}

export const logStartCodec = metaCodec<LogStart>({ index: uint, term: uint });

/** Snapshot metadata plus where its data lives: `chunks` records under snapChunkKey(0..chunks-1). */
export interface StoredSnapshot {
  readonly index: number;
  readonly term: number;
  readonly confState: ConfState;
  readonly size: number;
  readonly chunks: number;
}

export const snapshotCodec = metaCodec<StoredSnapshot>({ index: uint, term: uint, confState, size: uint, chunks: uint });
