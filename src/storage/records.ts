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

export function sealMeta(key: Uint8Array, record: object): Uint8Array {
  return sealBytes(key, pack(record));
}

function openMeta(key: Uint8Array, value: Uint8Array): Record<string, unknown> {
  let raw: unknown;
  try {
    raw = unpack(openBytes(key, value));
  } catch (e) {
    if (e instanceof BadRecord) throw e;
    throw new BadRecord(`undecodable msgpack (${e instanceof Error ? e.message : String(e)})`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new BadRecord('not a record');
  return raw as Record<string, unknown>;
}

function uint(r: Record<string, unknown>, field: string): number {
  const v = r[field];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new BadRecord(`field '${field}' is not a non-negative integer`);
  return v;
}

function ids(r: Record<string, unknown>, field: string): NodeId[] {
  const v = r[field];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'number' && Number.isSafeInteger(x) && x > 0)) {
    throw new BadRecord(`field '${field}' is not a list of node ids`);
  }
  return v as NodeId[];
}

// --- the format marker ---

export const FORMAT_MAGIC = 'setpoint-raft';
export const FORMAT_VERSION = 1;

export function sealFormat(key: Uint8Array): Uint8Array {
  return sealMeta(key, { magic: FORMAT_MAGIC, version: FORMAT_VERSION });
}

/** The version a marker declares; BadRecord if it is not a Setpoint marker at all. */
export function openFormat(key: Uint8Array, value: Uint8Array): number {
  const r = openMeta(key, value);
  if (r.magic !== FORMAT_MAGIC) throw new BadRecord(`format marker has magic ${JSON.stringify(r.magic)}`);
  return uint(r, 'version');
}

// --- hard state, conf state, log start ---

export function sealHardState(key: Uint8Array, hs: HardState): Uint8Array {
  return sealMeta(key, { term: hs.term, vote: hs.vote, commit: hs.commit });
}

export function openHardState(key: Uint8Array, value: Uint8Array): HardState {
  const r = openMeta(key, value);
  return { term: uint(r, 'term'), vote: uint(r, 'vote'), commit: uint(r, 'commit') };
}

export function sealConfState(key: Uint8Array, cs: ConfState): Uint8Array {
  return sealMeta(key, { voters: cs.voters, learners: cs.learners });
}

export function openConfState(key: Uint8Array, value: Uint8Array): ConfState {
  const r = openMeta(key, value);
  return { voters: ids(r, 'voters'), learners: ids(r, 'learners') };
}

/** The entry just before the first kept one: the log's anchor after compaction or a snapshot. */
export interface LogStart {
  readonly index: number;
  readonly term: number;
}

export function sealLogStart(key: Uint8Array, ls: LogStart): Uint8Array {
  return sealMeta(key, { index: ls.index, term: ls.term });
}

export function openLogStart(key: Uint8Array, value: Uint8Array): LogStart {
  const r = openMeta(key, value);
  return { index: uint(r, 'index'), term: uint(r, 'term') };
}

// --- snapshot metadata ---

/** Snapshot metadata plus where its data lives: `chunks` records under snapChunkKey(0..chunks-1). */
export interface StoredSnapshot {
  readonly index: number;
  readonly term: number;
  readonly confState: ConfState;
  readonly size: number;
  readonly chunks: number;
}

export function sealSnapshot(key: Uint8Array, s: StoredSnapshot): Uint8Array {
  return sealMeta(key, {
    index: s.index,
    term: s.term,
    voters: s.confState.voters,
    learners: s.confState.learners,
    size: s.size,
    chunks: s.chunks,
  });
}

export function openSnapshot(key: Uint8Array, value: Uint8Array): StoredSnapshot {
  const r = openMeta(key, value);
  return {
    index: uint(r, 'index'),
    term: uint(r, 'term'),
    confState: { voters: ids(r, 'voters'), learners: ids(r, 'learners') },
    size: uint(r, 'size'),
    chunks: uint(r, 'chunks'),
  };
}
