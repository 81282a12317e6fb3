// The Send stream's MessageBatch (proto/raft/raft.proto) encoded and decoded by hand, straight between
// bytes and the Raft core's Message objects. protobufjs went through an intermediate object per message
// and per entry, and a Long for every uint64 on the way, which made it the largest source of garbage on
// a leader under `check perf` (about a quarter of its allocations). The bytes are the same protobuf:
// tests check both directions against protobufjs. Decoding checks what messageFromWire checks (a known
// type, unsigned safe integers, member ids within uint64); a message that fails is returned as its error,
// so one bad message does not cost the batch, while bytes that are not protobuf at all fail the whole batch.
// Member ids are bigints (etcd's 64-bit ids); the few ids of a cluster recur in every message, so their
// varints are kept once made, and decoding remembers the last ids it read.
import type { ConfState, Entry, Message, MessageType, NodeId, Snapshot } from '../../raft/types.js';
import { Writer, varintLength as varintLen } from '../../kv/pb.js';
import { PeerCodecError, plainBytes, safe } from './codec.js';

/** Wire numbers of MessageType (raft.proto), by the core's names. */
const TYPE_NUMBER: Readonly<Record<MessageType, number>> = {
  hup: 1,
  beat: 2,
  checkQuorum: 3,
  unreachable: 4,
  snapStatus: 5,
  prop: 6,
  readIndex: 7,
  readIndexResp: 8,
  transferLeader: 9,
  app: 10,
  appResp: 11,
  vote: 12,
  voteResp: 13,
  preVote: 14,
  preVoteResp: 15,
  snap: 16,
  heartbeat: 17,
  heartbeatResp: 18,
  timeoutNow: 19,
};
const TYPE_NAME: (MessageType | undefined)[] = [];
for (const [name, n] of Object.entries(TYPE_NUMBER)) TYPE_NAME[n] = name as MessageType;

const ENTRY_CONF_CHANGE = 1;

/** A decoded batch: each message, or why it could not be taken. */
export type DecodedMessage = Message | PeerCodecError;

// ---- encoding ----

const varintSize = varintLen;

/** Size of a uint64 field (tag of one byte: field numbers here are all < 16), 0 when it is 0. */
const uintField = (n: number): number => (n === 0 ? 0 : 1 + varintSize(n));
const bytesField = (len: number): number => 1 + varintSize(len) + len;

function entrySize(e: Entry): number {
  return uintField(e.term) + uintField(e.index) + (e.type === 'confChange' ? 2 : 0) + (e.data.length > 0 ? bytesField(e.data.length) : 0);
}

/** Ids whose varints were made, up to a bound (a cluster has a handful of members). */
const idVarints = new Map<NodeId, Uint8Array>();
const ID_VARINTS_MAX = 256;

/** The varint of a uint64 id. */
function idVarint(id: NodeId): Uint8Array {
  let b = idVarints.get(id);
  if (b !== undefined) return b;
  const out: number[] = [];
  let v = id;
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  b = Uint8Array.from(out);
  if (idVarints.size >= ID_VARINTS_MAX) idVarints.clear();
  idVarints.set(id, b);
  return b;
}

/** Size of a uint64 id field, 0 when it is 0 (none). */
const idField = (id: NodeId): number => (id === 0n ? 0 : 1 + idVarint(id).length);

function confStateSize(c: ConfState): number {
  return packedSize(c.voters) + packedSize(c.learners);
}

function packedSize(ids: readonly NodeId[]): number {
  if (ids.length === 0) return 0;
  let body = 0;
  for (const id of ids) body += idVarint(id).length;
  return bytesField(body);
}

function metadataSize(s: Snapshot): number {
  return bytesField(confStateSize(s.metadata.confState)) + uintField(s.metadata.index) + uintField(s.metadata.term);
}

function snapshotSize(s: Snapshot): number {
  return (s.data.length > 0 ? bytesField(s.data.length) : 0) + bytesField(metadataSize(s));
}

function messageSize(m: Message): number {
  let n = 2 + idField(m.to) + idField(m.from) + uintField(m.term) + uintField(m.logTerm) + uintField(m.index) + uintField(m.commit);
  for (const e of m.entries) n += bytesField(entrySize(e));
  if (m.snapshot) n += bytesField(snapshotSize(m.snapshot));
  if (m.reject) n += 2;
  n += uintField(m.rejectHint);
  if (m.context !== undefined) n += bytesField(m.context.length);
  return n;
}

/** A member id field (nothing for 0), its varint made once per id. */
function writeId(w: Writer, tag: number, id: NodeId): void {
  if (id === 0n) return;
  w.buf[w.pos++] = tag;
  w.raw(idVarint(id));
}

/** A packed repeated field of member ids. */
function writePackedIds(w: Writer, tag: number, ids: readonly NodeId[]): void {
  if (ids.length === 0) return;
  let body = 0;
  for (const id of ids) body += idVarint(id).length;
  w.head(tag, body);
  for (const id of ids) w.raw(idVarint(id));
}

// Tags: field number << 3 | wire type (0 varint, 2 length-delimited).
const T_BATCH_MESSAGE = 0x0a;
const T_TYPE = 0x08;
const T_TO = 0x10;
const T_FROM = 0x18;
const T_TERM = 0x20;
const T_LOG_TERM = 0x28;
const T_INDEX = 0x30;
const T_ENTRY = 0x3a;
const T_COMMIT = 0x40;
const T_SNAPSHOT = 0x4a;
const T_REJECT = 0x50;
const T_REJECT_HINT = 0x58;
const T_CONTEXT = 0x62;

/** `reserve`: bytes left at the front for the caller (a gRPC message prefix), so the batch is not copied. */
export function encodeMessageBatch(messages: readonly Message[], reserve = 0): Buffer {
  const sizes = messages.map(messageSize);
  let total = reserve;
  for (const s of sizes) total += bytesField(s);
  const w = new Writer(total);
  w.pos = reserve;
  messages.forEach((m, i) => {
    w.head(T_BATCH_MESSAGE, sizes[i] as number);
    w.buf[w.pos++] = T_TYPE;
    w.varint(TYPE_NUMBER[m.type]);
    writeId(w, T_TO, m.to);
    writeId(w, T_FROM, m.from);
    w.uint(T_TERM, m.term);
    w.uint(T_LOG_TERM, m.logTerm);
    w.uint(T_INDEX, m.index);
    for (const e of m.entries) {
      w.head(T_ENTRY, entrySize(e));
      w.uint(0x08, e.term);
      w.uint(0x10, e.index);
      if (e.type === 'confChange') w.uint(0x18, ENTRY_CONF_CHANGE);
      if (e.data.length > 0) w.bytes(0x22, e.data);
    }
    w.uint(T_COMMIT, m.commit);
    if (m.snapshot) {
      const s = m.snapshot;
      w.head(T_SNAPSHOT, snapshotSize(s));
      if (s.data.length > 0) w.bytes(0x0a, s.data);
      w.head(0x12, metadataSize(s));
      w.head(0x0a, confStateSize(s.metadata.confState));
      writePackedIds(w, 0x0a, s.metadata.confState.voters);
      writePackedIds(w, 0x12, s.metadata.confState.learners);
      w.uint(0x10, s.metadata.index);
      w.uint(0x18, s.metadata.term);
    }
    if (m.reject) w.uint(T_REJECT, 1);
    w.uint(T_REJECT_HINT, m.rejectHint);
    if (m.context !== undefined) w.bytes(T_CONTEXT, m.context);
  });
  if (w.pos !== total) throw new Error(`peer codec: encoded ${w.pos} bytes, sized ${total}`);
  return w.buf;
}

// ---- decoding ----

class Malformed extends Error {}

/** A protobuf reader over one buffer; `end` bounds the current (sub)message. */
class Reader {
  pos: number;
  constructor(
    readonly buf: Uint8Array,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }

  more(): boolean {
    return this.pos < this.end;
  }

  /** A varint as a number; values past 2^53 come back as Infinity, so the safe-integer check refuses them. */
  varint(): number {
    let n = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new Malformed('truncated varint');
      const b = this.buf[this.pos++] as number;
      n += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) return n <= Number.MAX_SAFE_INTEGER ? n : Number.POSITIVE_INFINITY;
      mul *= 0x80;
    }
    throw new Malformed('varint longer than 10 bytes');
  }

  /**
   * A varint as a uint64 id. Read as two 32-bit halves (no bigint arithmetic per byte); the bigint is
   * made only for an id other than the last two read, which in a batch from one peer are its to and from.
   */
  id(): NodeId {
    let lo = 0;
    let hi: number;
    let b: number;
    let i = 0;
    for (; i < 4; i++) {
      b = this.byte();
      lo = (lo | ((b & 0x7f) << (7 * i))) >>> 0;
      if (b < 0x80) return idOf(lo, 0);
    }
    b = this.byte();
    lo = (lo | ((b & 0x0f) << 28)) >>> 0;
    hi = (b & 0x7f) >> 4;
    if (b < 0x80) return idOf(lo, hi);
    for (i = 0; i < 5; i++) {
      b = this.byte();
      // The tenth byte holds bit 63 only: anything more is not a uint64.
      if (i === 4 && b > 1) throw new PeerCodecError('a member id is larger than a uint64');
      hi = (hi | ((b & 0x7f) << (3 + 7 * i))) >>> 0;
      if (b < 0x80) return idOf(lo, hi);
    }
    throw new Malformed('varint longer than 10 bytes');
  }

  private byte(): number {
    if (this.pos >= this.end) throw new Malformed('truncated varint');
    return this.buf[this.pos++] as number;
  }

  /** A length-delimited field's bounds. */
  span(): [number, number] {
    const len = this.varint();
    const start = this.pos;
    if (len > this.end - start) throw new Malformed('length past the end');
    this.pos = start + len;
    return [start, start + len];
  }

  bytes(): Uint8Array {
    const [s, e] = this.span();
    return plainBytes(this.buf.subarray(s, e));
  }

  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 2) this.span();
    else if (wireType === 1 || wireType === 5) {
      const n = wireType === 1 ? 8 : 4;
      if (this.pos + n > this.end) throw new Malformed('truncated fixed field');
      this.pos += n;
    } else throw new Malformed(`wire type ${wireType}`);
  }

  /** Repeated uint64 ids, packed or not. */
  repeatedIds(wireType: number, into: NodeId[]): void {
    if (wireType === 0) into.push(this.id());
    else if (wireType === 2) {
      const [s, e] = this.span();
      const sub = new Reader(this.buf, s, e);
      while (sub.more()) into.push(sub.id());
    } else throw new Malformed(`wire type ${wireType} for a repeated integer`);
  }
}

// The last two ids decoded, by their halves: a batch's messages all carry the same to and from.
let lastLo = -1;
let lastHi = -1;
let lastId: NodeId = 0n;
let prevLo = -1;
let prevHi = -1;
let prevId: NodeId = 0n;

function idOf(lo: number, hi: number): NodeId {
  if (lo === lastLo && hi === lastHi) return lastId;
  if (lo === prevLo && hi === prevHi) {
    [prevLo, prevHi, prevId, lastLo, lastHi, lastId] = [lastLo, lastHi, lastId, prevLo, prevHi, prevId];
    return lastId;
  }
  const id = hi === 0 ? BigInt(lo) : (BigInt(hi) << 32n) | BigInt(lo);
  [prevLo, prevHi, prevId, lastLo, lastHi, lastId] = [lastLo, lastHi, lastId, lo, hi, id];
  return id;
}

function readEntry(r: Reader): Entry {
  let term = 0;
  let index = 0;
  let type = 0;
  let data: Uint8Array = new Uint8Array(0);
  while (r.more()) {
    const key = r.varint();
    const field = Math.floor(key / 8);
    const wt = key & 7;
    if (field === 1 && wt === 0) term = r.varint();
    else if (field === 2 && wt === 0) index = r.varint();
    else if (field === 3 && wt === 0) type = r.varint();
    else if (field === 4 && wt === 2) data = r.bytes();
    else r.skip(wt);
  }
  return { term: safe(term, 'entry term'), index: safe(index, 'entry index'), type: type === ENTRY_CONF_CHANGE ? 'confChange' : 'normal', data };
}

function readSnapshot(r: Reader): Snapshot {
  let data: Uint8Array = new Uint8Array(0);
  let metadata: { index: number; term: number; voters: NodeId[]; learners: NodeId[] } | undefined;
  while (r.more()) {
    const key = r.varint();
    const field = Math.floor(key / 8);
    const wt = key & 7;
    if (field === 1 && wt === 2) data = r.bytes();
    else if (field === 2 && wt === 2) {
      const [s, e] = r.span();
      const md = new Reader(r.buf, s, e);
      metadata = { index: 0, term: 0, voters: [], learners: [] };
      while (md.more()) {
        const k = md.varint();
        const f = Math.floor(k / 8);
        const w = k & 7;
        if (f === 1 && w === 2) {
          const [cs, ce] = md.span();
          const c = new Reader(md.buf, cs, ce);
          while (c.more()) {
            const ck = c.varint();
            const cf = Math.floor(ck / 8);
            if (cf === 1) c.repeatedIds(ck & 7, metadata.voters);
            else if (cf === 2) c.repeatedIds(ck & 7, metadata.learners);
            else c.skip(ck & 7);
          }
        } else if (f === 2 && w === 0) metadata.index = md.varint();
        else if (f === 3 && w === 0) metadata.term = md.varint();
        else md.skip(w);
      }
    } else r.skip(wt);
  }
  if (!metadata) throw new PeerCodecError('snapshot without metadata');
  const confState: ConfState = { voters: metadata.voters, learners: metadata.learners };
  return { data, metadata: { index: safe(metadata.index, 'snapshot index'), term: safe(metadata.term, 'snapshot term'), confState } };
}

function readMessage(r: Reader): Message {
  let type = 0;
  let to: NodeId = 0n;
  let from: NodeId = 0n;
  let term = 0;
  let logTerm = 0;
  let index = 0;
  let commit = 0;
  let reject = false;
  let rejectHint = 0;
  const entries: Entry[] = [];
  let snapshot: Snapshot | undefined;
  let context: Uint8Array | undefined;
  let problem: PeerCodecError | undefined;
  while (r.more()) {
    const key = r.varint();
    const field = Math.floor(key / 8);
    const wt = key & 7;
    if (wt === 0 && (field === 2 || field === 3)) {
      if (field === 2) to = r.id();
      else from = r.id();
    } else if (wt === 0 && field >= 1 && field <= 11 && field !== 7 && field !== 9) {
      const v = r.varint();
      if (field === 1) type = v;
      else if (field === 4) term = v;
      else if (field === 5) logTerm = v;
      else if (field === 6) index = v;
      else if (field === 8) commit = v;
      else if (field === 10) reject = v !== 0;
      else if (field === 11) rejectHint = v;
    } else if (wt === 2 && field === 7) {
      const [s, e] = r.span();
      try {
        entries.push(readEntry(new Reader(r.buf, s, e)));
      } catch (err) {
        if (!(err instanceof PeerCodecError)) throw err;
        problem ??= err;
      }
    } else if (wt === 2 && field === 9) {
      const [s, e] = r.span();
      try {
        snapshot = readSnapshot(new Reader(r.buf, s, e));
      } catch (err) {
        if (!(err instanceof PeerCodecError)) throw err;
        problem ??= err;
      }
    } else if (wt === 2 && field === 12) context = r.bytes();
    else r.skip(wt);
  }
  const name = TYPE_NAME[type];
  if (name === undefined) throw new PeerCodecError(`unknown message type ${type}`);
  const m: { -readonly [K in keyof Message]: Message[K] } = {
    type: name,
    to,
    from,
    term: safe(term, 'term'),
    logTerm: safe(logTerm, 'logTerm'),
    index: safe(index, 'index'),
    entries,
    commit: safe(commit, 'commit'),
    reject,
    rejectHint: safe(rejectHint, 'rejectHint'),
  };
  if (problem) throw problem;
  if (snapshot) m.snapshot = snapshot;
  if (context !== undefined) m.context = context;
  return m;
}

/** Decodes a MessageBatch; throws PeerCodecError if the bytes are not one. */
export function decodeMessageBatch(buf: Uint8Array): DecodedMessage[] {
  const out: DecodedMessage[] = [];
  try {
    const r = new Reader(buf, 0, buf.length);
    while (r.more()) {
      const key = r.varint();
      if (key !== T_BATCH_MESSAGE) {
        r.skip(key & 7);
        continue;
      }
      const [s, e] = r.span();
      try {
        out.push(readMessage(new Reader(buf, s, e)));
      } catch (err) {
        if (!(err instanceof PeerCodecError)) throw err;
        out.push(err);
      }
    }
  } catch (err) {
    if (err instanceof Malformed) throw new PeerCodecError(`undecodable message batch: ${err.message}`);
    throw err;
  }
  return out;
}
