// A txn's Raft entry in a fixed binary layout instead of msgpack. Every write the control plane makes is a
// txn (Kubernetes' optimistic update: compare the mod revision, put, else get), and every member decodes
// every entry, so this is the decode on the path every control-plane write takes.
//
// Layout after the tag byte and the id (u8 length, ASCII): the txn body. A body is a presence byte
// (compare, success, failure), then each list that is there as a u32 count and its items. A compare is a
// message; an op is a kind byte (range, put, delete, nested txn) and its message or body. A message is a
// u16 presence mask over its fields in the order its writer and reader list them, then each field that
// is there: bytes as a u32 length and the bytes (decoded as views into the entry, as a put's are),
// numbers as float64 (every JS number round-trips), strings as a u16 length and UTF-8, booleans and enums
// as one byte.
//
// An on-disk format (see requests.ts for the rule it falls under). Here: a field added at the end of a
// message's list (a new mask bit), a new op kind or a new enum name at the end of its list is read from
// old entries as absent and needs no new version; reordering fields, ops or enum names, or changing a
// field's encoding, does. test/server/member/record-formats.test.ts keeps frozen txn entries.
import type { Compare, DeleteRangeRequest, PutRequest, RangeRequest, RequestOp, TxnRequest } from '../../kv/types.js';

const OP_RANGE = 1;
const OP_PUT = 2;
const OP_DELETE = 3;
const OP_TXN = 4;

const COMPARE_RESULTS = ['EQUAL', 'GREATER', 'LESS', 'NOT_EQUAL'] as const;
const COMPARE_TARGETS = ['VERSION', 'CREATE', 'MOD', 'VALUE', 'LEASE'] as const;
const SORT_ORDERS = ['NONE', 'ASCEND', 'DESCEND'] as const;
const SORT_TARGETS = ['KEY', 'VERSION', 'CREATE', 'MOD', 'VALUE'] as const;

/** Thrown while encoding a txn the layout cannot hold exactly; the caller falls back to msgpack. */
export class NotInLayout extends Error {}

/**
 * Where a message's fields go. Without a buffer it only counts the bytes; encodeTxnEntry runs the writers
 * twice, first to count, then into a buffer of exactly that size.
 */
class Sink {
  at = 0;
  constructor(readonly buf?: Buffer) {}

  u8(n: number): void {
    if (this.buf) this.buf[this.at] = n;
    this.at += 1;
  }
  u16(n: number): void {
    this.buf?.writeUInt16BE(n, this.at);
    this.at += 2;
  }
  u32(n: number): void {
    this.buf?.writeUInt32BE(n, this.at);
    this.at += 4;
  }
  raw(b: Uint8Array): void {
    this.buf?.set(b, this.at);
    this.at += b.length;
  }
  utf8(s: string, n: number): void {
    this.buf?.write(s, this.at, n, 'utf8');
    this.at += n;
  }

  bytes(b: Uint8Array | undefined): void {
    if (b === undefined) return;
    if (!(b instanceof Uint8Array)) throw new NotInLayout('bytes');
    this.u32(b.length);
    this.raw(b);
  }
  number(n: number | undefined): void {
    if (n === undefined) return;
    if (typeof n !== 'number') throw new NotInLayout('number');
    this.buf?.writeDoubleBE(n, this.at);
    this.at += 8;
  }
  str(s: string | undefined): void {
    if (s === undefined) return;
    if (typeof s !== 'string') throw new NotInLayout('string');
    const n = Buffer.byteLength(s, 'utf8');
    if (n > 0xffff) throw new NotInLayout('string');
    this.u16(n);
    this.utf8(s, n);
  }
  bool(v: boolean | undefined): void {
    if (v === undefined) return;
    if (typeof v !== 'boolean') throw new NotInLayout('boolean');
    this.u8(v ? 1 : 0);
  }
  oneOf(v: string | undefined, names: readonly string[]): void {
    if (v === undefined) return;
    const i = names.indexOf(v);
    if (i < 0) throw new NotInLayout(`enum ${String(v)}`);
    this.u8(i);
  }
}

/** The presence mask of a message: bit i set when the i-th value is not undefined. */
function mask(...values: unknown[]): number {
  let m = 0;
  for (let i = 0; i < values.length; i++) if (values[i] !== undefined) m |= 1 << i;
  return m;
}

function writeCompare(o: Sink, c: Compare): void {
  o.u16(mask(c.result, c.target, c.key, c.rangeEnd, c.version, c.createRevision, c.modRevision, c.value, c.lease));
  o.oneOf(c.result, COMPARE_RESULTS);
  o.oneOf(c.target, COMPARE_TARGETS);
  o.bytes(c.key);
  o.bytes(c.rangeEnd);
  o.number(c.version);
  o.number(c.createRevision);
  o.number(c.modRevision);
  o.bytes(c.value);
  o.str(c.lease);
}

function writeRange(o: Sink, r: RangeRequest): void {
  o.u16(
    mask(r.key, r.rangeEnd, r.limit, r.revision, r.sortOrder, r.sortTarget, r.serializable, r.keysOnly, r.countOnly, r.minModRevision, r.maxModRevision, r.minCreateRevision, r.maxCreateRevision),
  );
  o.bytes(r.key);
  o.bytes(r.rangeEnd);
  o.number(r.limit);
  o.number(r.revision);
  o.oneOf(r.sortOrder, SORT_ORDERS);
  o.oneOf(r.sortTarget, SORT_TARGETS);
  o.bool(r.serializable);
  o.bool(r.keysOnly);
  o.bool(r.countOnly);
  o.number(r.minModRevision);
  o.number(r.maxModRevision);
  o.number(r.minCreateRevision);
  o.number(r.maxCreateRevision);
}

function writePut(o: Sink, p: PutRequest): void {
  o.u16(mask(p.key, p.value, p.lease, p.prevKv, p.ignoreValue, p.ignoreLease));
  o.bytes(p.key);
  o.bytes(p.value);
  o.str(p.lease);
  o.bool(p.prevKv);
  o.bool(p.ignoreValue);
  o.bool(p.ignoreLease);
}

function writeDelete(o: Sink, d: DeleteRangeRequest): void {
  o.u16(mask(d.key, d.rangeEnd, d.prevKv));
  o.bytes(d.key);
  o.bytes(d.rangeEnd);
  o.bool(d.prevKv);
}

function writeOps(o: Sink, ops: readonly RequestOp[]): void {
  o.u32(ops.length);
  for (const op of ops) {
    if ('requestPut' in op) {
      o.u8(OP_PUT);
      writePut(o, op.requestPut);
    } else if ('requestRange' in op) {
      o.u8(OP_RANGE);
      writeRange(o, op.requestRange);
    } else if ('requestDeleteRange' in op) {
      o.u8(OP_DELETE);
      writeDelete(o, op.requestDeleteRange);
    } else if ('requestTxn' in op) {
      o.u8(OP_TXN);
      writeBody(o, op.requestTxn);
    } else throw new NotInLayout('op');
  }
}

function writeBody(o: Sink, t: TxnRequest): void {
  o.u8((t.compare ? 1 : 0) | (t.success ? 2 : 0) | (t.failure ? 4 : 0));
  if (t.compare) {
    o.u32(t.compare.length);
    for (const c of t.compare) writeCompare(o, c);
  }
  if (t.success) writeOps(o, t.success);
  if (t.failure) writeOps(o, t.failure);
}

function writeEntry(o: Sink, tag: number, id: string, t: TxnRequest): void {
  o.u8(tag);
  o.u8(id.length);
  o.utf8(id, id.length);
  writeBody(o, t);
}

/** The entry: tag, id (ASCII), body. Throws NotInLayout for anything it cannot hold exactly. */
export function encodeTxnEntry(tag: number, id: string, t: TxnRequest): Uint8Array {
  // The id is a member's request id, ASCII: one byte per character.
  if (id.length > 0xff || Buffer.byteLength(id, 'utf8') !== id.length) throw new NotInLayout('id');
  const size = new Sink();
  writeEntry(size, tag, id, t);
  const buf = Buffer.allocUnsafe(size.at);
  writeEntry(new Sink(buf), tag, id, t);
  return buf;
}

class Reader {
  readonly b: Buffer;
  at: number;
  /** The presence mask of the message being read. */
  mask = 0;
  constructor(b: Buffer, at: number) {
    this.b = b;
    this.at = at;
  }
  u8(): number {
    return this.b[this.at++] as number;
  }
  u32(): number {
    const n = this.b.readUInt32BE(this.at);
    this.at += 4;
    return n;
  }
  begin(): void {
    this.mask = this.b.readUInt16BE(this.at);
    this.at += 2;
  }
  has(bit: number): boolean {
    return (this.mask & (1 << bit)) !== 0;
  }
  bytes(bit: number): Buffer | undefined {
    if (!this.has(bit)) return undefined;
    const n = this.u32();
    const v = this.b.subarray(this.at, this.at + n);
    this.at += n;
    return v;
  }
  number(bit: number): number | undefined {
    if (!this.has(bit)) return undefined;
    const v = this.b.readDoubleBE(this.at);
    this.at += 8;
    return v;
  }
  str(bit: number): string | undefined {
    if (!this.has(bit)) return undefined;
    const n = this.b.readUInt16BE(this.at);
    const v = this.b.toString('utf8', this.at + 2, this.at + 2 + n);
    this.at += 2 + n;
    return v;
  }
  bool(bit: number): boolean | undefined {
    return this.has(bit) ? this.u8() === 1 : undefined;
  }
  oneOf<T extends string>(bit: number, names: readonly T[]): T | undefined {
    if (!this.has(bit)) return undefined;
    const v = names[this.u8()];
    if (v === undefined) throw new Error('txn entry: unknown enum value');
    return v;
  }
}

// Object literals with every field, in the mask's order (their values are read in that order), so each
// message decodes to one shape. A field that is there but undefined reads as absent everywhere.
function readCompare(r: Reader): Compare {
  r.begin();
  return {
    result: r.oneOf(0, COMPARE_RESULTS),
    target: r.oneOf(1, COMPARE_TARGETS),
    key: r.bytes(2),
    rangeEnd: r.bytes(3),
    version: r.number(4),
    createRevision: r.number(5),
    modRevision: r.number(6),
    value: r.bytes(7),
    lease: r.str(8),
  } as Compare;
}

function readRange(r: Reader): RangeRequest {
  r.begin();
  return {
    key: r.bytes(0),
    rangeEnd: r.bytes(1),
    limit: r.number(2),
    revision: r.number(3),
    sortOrder: r.oneOf(4, SORT_ORDERS),
    sortTarget: r.oneOf(5, SORT_TARGETS),
    serializable: r.bool(6),
    keysOnly: r.bool(7),
    countOnly: r.bool(8),
    minModRevision: r.number(9),
    maxModRevision: r.number(10),
    minCreateRevision: r.number(11),
    maxCreateRevision: r.number(12),
  } as RangeRequest;
}

function readPut(r: Reader): PutRequest {
  r.begin();
  return { key: r.bytes(0), value: r.bytes(1), lease: r.str(2), prevKv: r.bool(3), ignoreValue: r.bool(4), ignoreLease: r.bool(5) } as PutRequest;
}

function readDelete(r: Reader): DeleteRangeRequest {
  r.begin();
  return { key: r.bytes(0), rangeEnd: r.bytes(1), prevKv: r.bool(2) } as DeleteRangeRequest;
}

function readOps(r: Reader): RequestOp[] {
  const n = r.u32();
  const ops: RequestOp[] = [];
  for (let i = 0; i < n; i++) {
    const kind = r.u8();
    if (kind === OP_PUT) ops.push({ requestPut: readPut(r) });
    else if (kind === OP_RANGE) ops.push({ requestRange: readRange(r) });
    else if (kind === OP_DELETE) ops.push({ requestDeleteRange: readDelete(r) });
    else if (kind === OP_TXN) ops.push({ requestTxn: readBody(r) });
    else throw new Error(`txn entry: unknown op kind ${kind}`);
  }
  return ops;
}

function readBody(r: Reader): TxnRequest {
  const present = r.u8();
  let compare: Compare[] | undefined;
  if (present & 1) {
    const n = r.u32();
    compare = [];
    for (let i = 0; i < n; i++) compare.push(readCompare(r));
  }
  const success = present & 2 ? readOps(r) : undefined;
  const failure = present & 4 ? readOps(r) : undefined;
  return { compare, success, failure } as TxnRequest;
}

/** Decodes an entry encodeTxnEntry made: its id and txn (bytes are views into `data`). */
export function decodeTxnEntry(data: Uint8Array): { id: string; req: TxnRequest } {
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const idLen = b[1] as number;
  const id = b.toString('latin1', 2, 2 + idLen);
  const r = new Reader(b, 2 + idLen);
  const req = readBody(r);
  if (r.at !== b.length) throw new Error('txn entry: trailing bytes');
  return { id, req };
}
