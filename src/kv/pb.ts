// Protobuf encoding by hand for the few messages hot paths or files need (mvccpb.KeyValue in watch
// responses and in etcd-format snapshots, the peer transport's MessageBatch): fields in number order,
// proto3 zero values omitted, as Go's encoder does. The one varint writer and size rule of the project.
import type { KeyValue } from './types.js';

/** Bytes of an integer below 2^53, or any int64/uint64 as a bigint (negatives in two's complement: ten). */
export function varintLength(n: number | bigint): number {
  if (typeof n === 'number') {
    if (n < 0) return 10;
    let len = 1;
    while (n >= 128) {
      n = Math.floor(n / 128);
      len++;
    }
    return len;
  }
  let v = BigInt.asUintN(64, n);
  let len = 1;
  while (v >= 128n) {
    v >>= 7n;
    len++;
  }
  return len;
}

/** Writes a non-negative integer below 2^53 as a varint at buf[at]; returns where it ends. */
export function putVarint(buf: Buffer, at: number, n: number): number {
  while (n >= 128) {
    buf[at++] = (n % 128) | 0x80;
    n = Math.floor(n / 128);
  }
  buf[at++] = n;
  return at;
}

/**
 * Writes into a buffer sized beforehand (from the *Len functions). Tags passed as one byte (`uint`,
 * `bytes`, `head`, `packed`) must be of field numbers below 16.
 */
export class Writer {
  readonly buf: Buffer;
  pos = 0;

  constructor(sizeOrBuffer: number | Buffer) {
    this.buf = typeof sizeOrBuffer === 'number' ? Buffer.allocUnsafe(sizeOrBuffer) : sizeOrBuffer;
  }

  varint(n: number | bigint): void {
    if (typeof n === 'number') {
      this.pos = putVarint(this.buf, this.pos, n);
      return;
    }
    let v = BigInt.asUintN(64, n);
    while (v >= 128n) {
      this.buf[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.pos++] = Number(v);
  }

  /** Bytes as they are (an encoded message or field). */
  raw(b: Uint8Array): void {
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** A varint field, nothing when it is 0. */
  uint(tag: number, n: number | bigint): void {
    if (n === 0 || n === 0n) return;
    this.buf[this.pos++] = tag;
    this.varint(n);
  }

  /** A length-delimited field. */
  bytes(tag: number, data: Uint8Array): void {
    this.head(tag, data.length);
    this.raw(data);
  }

  /** A length-delimited field's tag and length; its `len` bytes must follow. */
  head(tag: number, len: number): void {
    this.buf[this.pos++] = tag;
    this.varint(len);
  }

  /** A packed repeated varint field, nothing when empty. */
  packed(tag: number, ns: readonly (number | bigint)[]): void {
    if (ns.length === 0) return;
    let body = 0;
    for (const n of ns) body += varintLength(n);
    this.head(tag, body);
    for (const n of ns) this.varint(n);
  }
}

/** Field sizes and writers for the scalar kinds used here; zero values are omitted (proto3). */
export const tagLen = (field: number): number => varintLength(field << 3);
export const intFieldLen = (field: number, n: number | bigint): number => (n === 0 || n === 0n ? 0 : tagLen(field) + varintLength(n));
export const bytesFieldLen = (field: number, len: number): number => (len === 0 ? 0 : tagLen(field) + varintLength(len) + len);

export function writeInt(w: Writer, field: number, n: number | bigint): void {
  if (n === 0 || n === 0n) return;
  w.varint(field << 3);
  w.varint(n);
}

export function writeBytes(w: Writer, field: number, b: Uint8Array): void {
  if (b.length === 0) return;
  w.varint((field << 3) | 2);
  w.varint(b.length);
  w.raw(b);
}

/** A signed int64 held as a JS number (ids, revisions): negatives go out as 10-byte two's complement. */
export const int64 = (n: number): number | bigint => (n < 0 ? BigInt(n) : n);

export function kvLength(kv: KeyValue): number {
  return (
    bytesFieldLen(1, kv.key.length) +
    intFieldLen(2, kv.createRevision) +
    intFieldLen(3, kv.modRevision) +
    intFieldLen(4, kv.version) +
    bytesFieldLen(5, kv.value.length) +
    intFieldLen(6, leaseId(kv))
  );
}

export function leaseId(kv: KeyValue): number | bigint {
  return kv.lease === '0' || kv.lease === '' ? 0 : BigInt(kv.lease);
}

export function writeKv(w: Writer, field: number, kv: KeyValue, len: number): void {
  w.varint((field << 3) | 2);
  w.varint(len);
  writeKvFields(w, kv);
}

function writeKvFields(w: Writer, kv: KeyValue): void {
  writeBytes(w, 1, kv.key);
  writeInt(w, 2, kv.createRevision);
  writeInt(w, 3, kv.modRevision);
  writeInt(w, 4, kv.version);
  writeBytes(w, 5, kv.value);
  writeInt(w, 6, leaseId(kv));
}

/** An mvccpb.KeyValue message. */
export function encodeKeyValue(kv: KeyValue): Buffer {
  const len = kvLength(kv);
  const w = new Writer(len);
  writeKvFields(w, kv);
  return w.buf;
}

// ---- reading ----
// The few places that read protobuf by hand (an etcd snapshot's mvccpb/leasepb records, the raw bytes of a
// request whose empty fields the decoder lost) walk a message's top-level fields with this one reader.

export const WIRE_VARINT = 0;
export const WIRE_I64 = 1;
export const WIRE_LEN = 2;
export const WIRE_I32 = 5;

/** One field: for a varint, [start, end) are its bytes; for a length-delimited field, its payload; fixed: its bytes. */
export interface WireField {
  readonly no: number;
  readonly wire: number;
  readonly start: number;
  readonly end: number;
}

function readVarint(b: Uint8Array, pos: number, to: number): { v: number; next: number } | undefined {
  let v = 0;
  let mul = 1;
  for (let i = 0; i < 10; i++) {
    if (pos >= to) return undefined;
    const byte = b[pos++] as number;
    v += (byte & 0x7f) * mul;
    mul *= 128;
    if ((byte & 0x80) === 0) return { v, next: pos };
  }
  return undefined;
}

/**
 * The top-level fields of the message in b[from, to), in order. It stops at the first malformed byte (a
 * truncated varint or field, groups, an unknown wire type) and then returns false; true when the message
 * ended cleanly. Callers that trust the bytes (already decoded once) may ignore the result.
 */
export function* wireFields(b: Uint8Array, from = 0, to = b.length): Generator<WireField, boolean> {
  let pos = from;
  while (pos < to) {
    const tag = readVarint(b, pos, to);
    if (!tag) return false;
    const no = Math.floor(tag.v / 8);
    const wire = tag.v % 8;
    pos = tag.next;
    let start = pos;
    let end: number;
    if (wire === WIRE_VARINT) {
      const v = readVarint(b, pos, to);
      if (!v) return false;
      end = v.next;
    } else if (wire === WIRE_I64 || wire === WIRE_I32) {
      end = pos + (wire === WIRE_I64 ? 8 : 4);
    } else if (wire === WIRE_LEN) {
      const len = readVarint(b, pos, to);
      if (!len) return false;
      start = len.next;
      end = len.next + len.v;
    } else {
      return false;
    }
    if (end > to) return false;
    yield { no, wire, start, end };
    pos = end;
  }
  return true;
}

/** A varint field's value as a uint64 (wireFields gave its bytes). */
export function varintValue(b: Uint8Array, f: WireField): bigint {
  let v = 0n;
  let shift = 0n;
  for (let i = f.start; i < f.end; i++, shift += 7n) v |= BigInt((b[i] as number) & 0x7f) << shift;
  return BigInt.asUintN(64, v);
}
