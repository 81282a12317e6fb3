// How the write-ahead log lays out its records. Every record is framed as
//
//   [body length u32le][crc32 of the body u32le][body: record type u8, payload]
//
// and a frame of eight zero bytes marks the end of a segment's records (segments are zero-filled ahead of
// the writer). Log entries — the hot, high-volume records — use a fixed binary payload: [entry type u8]
// [index u64be][term u64be][data], the data copied verbatim. The other records are small and written at
// most once per Ready, so they are msgpack: self-describing, which lets a later format add a field without
// a new layout. Member ids (a vote, a configuration's voters and learners) are msgpack 64-bit integers
// (int 64 below 2^63, uint 64 above), read back as bigints. Decoding parses into typed values here, at the
// edge; anything malformed is a BadRecord.
//
// This is an on-disk format, frozen by test/storage/records-format.test.ts (hex samples of every record
// kind in every version this code reads) and test/storage/format-dir.test.ts (a whole data directory of
// each version, fixtures/format-v<N>-dir.json, that the current code must load). The version rule: a new
// record type, or a new field in a msgpack record that readers may ignore, needs no new version; changing
// the frame, the entry layout, a record type's number, or a field's name, type or meaning does —
// FORMAT_VERSION goes up, and directories of the old version are either still read (their samples stay in
// the tests) or refused with STORAGE_VERSION and a message saying what to do. Entries' data and snapshot
// data are the application's bytes, kept as they are, with formats of their own under the same version
// (src/raft/types.ts encodeConfChange, src/server/member/requests.ts, membership.ts).
import { crc32 } from 'node:zlib';
import { pack, unpack } from 'msgpackr';
import type { ConfState, Entry, EntryType, HardState, NodeId } from '../raft/types.js';
import { NONE, isNodeId } from '../raft/types.js';

/** A record that does not decode: the caller names the segment, the offset and the directory. */
export class BadRecord extends Error {}

export const FORMAT_MAGIC = 'setpoint-raft';
/**
 * Version 1 kept the log in LevelDB; version 2 is this write-ahead log with 52-bit member ids (msgpack
 * numbers); version 3 carries etcd's 64-bit member ids (msgpack 64-bit integers, conf changes with string
 * ids). Versions 1 and 2 are refused (src/storage/errors.ts says what to do): their member ids are not
 * etcd's, so they cannot be carried over.
 */
export const FORMAT_VERSION = 3;

const FRAME_HEADER = 8;

/** Record types. The numbers are on disk: never reuse one. */
export const RecordType = {
  /** First record of every segment: magic, format version and the segment's sequence number. */
  format: 1,
  entry: 2,
  hardState: 3,
  /** The configuration at the application's applied index. */
  confState: 4,
  /** The recorded configuration no longer applies (an installed snapshot brought its own). */
  confStateClear: 5,
  /** Entries up to and including `index` are discarded; `index` and its term anchor the log. */
  compact: 6,
  /** The whole log is replaced: empty, anchored at `index` (an installed snapshot). */
  reset: 7,
  /** The latest snapshot's metadata; its data is in a file of its own (see snapshotFileName). */
  snapshot: 8,
} as const;

const TWO_32 = 2 ** 32;
const ENTRY_PAYLOAD = 1 + 8 + 8;
const ENTRY_TYPES: readonly EntryType[] = ['normal', 'confChange'];

function writeU64(b: Buffer, at: number, v: number): void {
  b.writeUInt32BE(Math.floor(v / TWO_32), at);
  b.writeUInt32BE(v >>> 0, at + 4);
}

function readU64(b: Buffer, at: number): number {
  return b.readUInt32BE(at) * TWO_32 + b.readUInt32BE(at + 4);
}

/**
 * Fills in the frame header of a buffer whose body (from FRAME_HEADER on) is written; `tail`, if given,
 * is the rest of the body, written right after the buffer.
 */
function seal(b: Buffer, tail?: Uint8Array): Buffer {
  const head = crc32(b.subarray(FRAME_HEADER));
  b.writeUInt32LE(b.length - FRAME_HEADER + (tail?.length ?? 0), 0);
  // Not crc32(empty, seed): Node answers 0 for an empty view of an empty ArrayBuffer (TextEncoder's '').
  b.writeUInt32LE(tail && tail.length > 0 ? crc32(tail, head) : head, 4);
  return b;
}

const ENTRY_HEAD = FRAME_HEADER + 1 + ENTRY_PAYLOAD;

/**
 * One framed entry record as two pieces to write one after the other: its frame header and fixed fields,
 * then the entry's data itself, not copied (the checksum runs on across both).
 */
export function frameEntryParts(e: Entry, into: Uint8Array[]): void {
  const b = Buffer.allocUnsafe(ENTRY_HEAD);
  const at = FRAME_HEADER;
  b[at] = RecordType.entry;
  b[at + 1] = e.type === 'normal' ? 0 : 1;
  writeU64(b, at + 2, e.index);
  writeU64(b, at + 10, e.term);
  into.push(seal(b, e.data));
  if (e.data.length > 0) into.push(e.data);
}

/** One framed entry record in a single buffer. */
export function frameEntry(e: Entry): Buffer {
  const parts: Uint8Array[] = [];
  frameEntryParts(e, parts);
  return Buffer.concat(parts);
}

/** One framed record of `type` around `payload` (tests use it to write records the writer would not). */
export function frameRecord(type: number, payload: Uint8Array): Buffer {
  const b = Buffer.allocUnsafe(FRAME_HEADER + 1 + payload.length);
  b[FRAME_HEADER] = type;
  b.set(payload, FRAME_HEADER + 1);
  return seal(b);
}

function frameMsgpack(type: number, value: Record<string, unknown>): Buffer {
  return frameRecord(type, pack(value));
}

/** Where one frame stands in a buffer: a record, the end of the records, or a frame that is not sound. */
export type Frame =
  | { readonly kind: 'record'; readonly type: number; readonly payload: Buffer; readonly next: number }
  | { readonly kind: 'end' }
  | { readonly kind: 'bad'; readonly why: string; readonly until: number };

/** Reads the frame at `at`. A bad frame says how far it claims to reach, so the caller can judge a torn write. */
export function readFrame(buf: Buffer, at: number): Frame {
  if (at === buf.length) return { kind: 'end' };
  if (at + FRAME_HEADER > buf.length) {
    return buf.subarray(at).every((x) => x === 0) ? { kind: 'end' } : { kind: 'bad', why: 'a frame header is cut off by the end of the file', until: buf.length };
  }
  const len = buf.readUInt32LE(at);
  const crc = buf.readUInt32LE(at + 4);
  if (len === 0) return crc === 0 ? { kind: 'end' } : { kind: 'bad', why: 'a frame of length 0 has a checksum', until: at + FRAME_HEADER };
  const end = at + FRAME_HEADER + len;
  if (end > buf.length) return { kind: 'bad', why: `a frame of ${len} bytes runs past the end of the file`, until: buf.length };
  const body = buf.subarray(at + FRAME_HEADER, end);
  if (crc32(body) !== crc) return { kind: 'bad', why: 'checksum mismatch', until: end };
  return { kind: 'record', type: body[0] as number, payload: body.subarray(1), next: end };
}

export function openEntry(payload: Buffer): Entry {
  if (payload.length < ENTRY_PAYLOAD) throw new BadRecord(`entry of ${payload.length} bytes is shorter than its header`);
  const type = ENTRY_TYPES[payload[0] as number];
  if (type === undefined) throw new BadRecord(`unknown entry type ${payload[0]}`);
  // A copy: the payload is a view of a whole segment read at startup, which must not stay alive for one entry.
  return { index: readU64(payload, 1), term: readU64(payload, 9), type, data: Uint8Array.prototype.slice.call(payload, ENTRY_PAYLOAD) };
}

function openMsgpack(payload: Buffer): Record<string, unknown> {
  let raw: unknown;
  try {
    raw = unpack(payload);
  } catch (e) {
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
  if (!Array.isArray(v) || !v.every(isNodeId)) throw new BadRecord(`field '${field}' is not a list of node ids`);
  return v;
};

/** A node id or NONE (0n): a vote. */
const idOrNone: FieldParser<NodeId> = (v, field) => {
  if (v !== NONE && !isNodeId(v)) throw new BadRecord(`field '${field}' is not a node id`);
  return v;
};

const confState: FieldParser<ConfState> = (v, field) => {
  if (!isRecord(v)) throw new BadRecord(`field '${field}' is not a record`);
  return { voters: ids(v.voters, `${field}.voters`), learners: ids(v.learners, `${field}.learners`) };
};

/** Frames and opens one kind of msgpack record; only the listed fields are written or read. */
export interface MetaCodec<T> {
  readonly type: number;
  frame(value: T): Buffer;
  open(payload: Buffer): T;
}

function metaCodec<T extends object>(type: number, fields: { readonly [K in keyof T]: FieldParser<T[K]> }): MetaCodec<T> {
  const names = Object.keys(fields) as Array<keyof T & string>;
  return {
    type,
    frame(value) {
      const out: Record<string, unknown> = {};
      for (const n of names) out[n] = value[n];
      return frameMsgpack(type, out);
    },
    open(payload) {
      const r = openMsgpack(payload);
      const out: Record<string, unknown> = {};
      for (const n of names) out[n] = fields[n](r[n], n);
      return out as T;
    },
  };
}

export interface SegmentFormat {
  readonly magic: string;
  readonly version: number;
  readonly seq: number;
}

export const formatCodec = metaCodec<SegmentFormat>(RecordType.format, { magic: text, version: uint, seq: uint });

export const hardStateCodec = metaCodec<HardState>(RecordType.hardState, { term: uint, vote: idOrNone, commit: uint });

export const confStateCodec = metaCodec<ConfState>(RecordType.confState, { voters: ids, learners: ids });

export const confStateClearCodec = metaCodec<Record<string, never>>(RecordType.confStateClear, {});

/** The entry just before the first one kept: the log's anchor after compaction or a snapshot. */
export interface LogStart {
  readonly index: number;
  readonly term: number;
}

export const compactCodec = metaCodec<LogStart>(RecordType.compact, { index: uint, term: uint });

export const resetCodec = metaCodec<LogStart>(RecordType.reset, { index: uint, term: uint });

/** Snapshot metadata plus what its data file must hold: `size` bytes with CRC-32 `crc`. */
export interface StoredSnapshot {
  readonly index: number;
  readonly term: number;
  readonly confState: ConfState;
  readonly size: number;
  readonly crc: number;
}

export const snapshotCodec = metaCodec<StoredSnapshot>(RecordType.snapshot, { index: uint, term: uint, confState, size: uint, crc: uint });

export function dataChecksum(data: Uint8Array): number {
  return crc32(data);
}

const SEGMENT_NAME = /^([0-9a-f]{16})\.wal$/;
const SNAPSHOT_NAME = /^([0-9a-f]{16})\.snap$/;

export function segmentFileName(seq: number): string {
  return `${seq.toString(16).padStart(16, '0')}.wal`;
}

export function segmentSeqOf(name: string): number | undefined {
  const m = SEGMENT_NAME.exec(name);
  return m ? parseInt(m[1] as string, 16) : undefined;
}

/** A snapshot's data lives in a file named after its index. */
export function snapshotFileName(index: number): string {
  return `${index.toString(16).padStart(16, '0')}.snap`;
}

export function snapshotIndexOf(name: string): number | undefined {
  const m = SNAPSHOT_NAME.exec(name);
  return m ? parseInt(m[1] as string, 16) : undefined;
}
