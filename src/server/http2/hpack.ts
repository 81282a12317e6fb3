// HPACK (RFC 7541) for the client port's own HTTP/2 server (http2/front.ts): a decoder with the dynamic
// table a client's encoder fills, and a stateless encoder. The encoder writes every field as a literal
// that is never added to the table, so the client's decoder table stays empty and nothing has to be
// tracked for it; the server's responses are a handful of short fields, so that costs a few bytes.
import { huffmanDecode } from './hpack-huffman.js';

/** RFC 7541 Appendix A. Index 0 is unused. */
const STATIC: readonly (readonly [string, string])[] = [
  ['', ''],
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'],
  ['accept-language', ''],
  ['accept-ranges', ''],
  ['accept', ''],
  ['access-control-allow-origin', ''],
  ['age', ''],
  ['allow', ''],
  ['authorization', ''],
  ['cache-control', ''],
  ['content-disposition', ''],
  ['content-encoding', ''],
  ['content-language', ''],
  ['content-length', ''],
  ['content-location', ''],
  ['content-range', ''],
  ['content-type', ''],
  ['cookie', ''],
  ['date', ''],
  ['etag', ''],
  ['expect', ''],
  ['expires', ''],
  ['from', ''],
  ['host', ''],
  ['if-match', ''],
  ['if-modified-since', ''],
  ['if-none-match', ''],
  ['if-range', ''],
  ['if-unmodified-since', ''],
  ['last-modified', ''],
  ['link', ''],
  ['location', ''],
  ['max-forwards', ''],
  ['proxy-authenticate', ''],
  ['proxy-authorization', ''],
  ['range', ''],
  ['referer', ''],
  ['refresh', ''],
  ['retry-after', ''],
  ['server', ''],
  ['set-cookie', ''],
  ['strict-transport-security', ''],
  ['transfer-encoding', ''],
  ['user-agent', ''],
  ['vary', ''],
  ['via', ''],
  ['www-authenticate', ''],
];
const STATIC_COUNT = STATIC.length - 1;
const STATIC_NAME_INDEX = new Map<string, number>();
for (let i = STATIC_COUNT; i >= 1; i--) STATIC_NAME_INDEX.set((STATIC[i] as readonly [string, string])[0], i);

/** RFC 7541 §4.1: an entry's size is its name and value lengths plus 32. */
const ENTRY_OVERHEAD = 32;

export class HpackError extends Error {}

/** An HPACK integer with an N-bit prefix (RFC 7541 §5.1): its value and the offset after it; undefined if truncated. */
export function readInt(b: Uint8Array, pos: number, prefixBits: number): { value: number; next: number } | undefined {
  const max = (1 << prefixBits) - 1;
  if (pos >= b.length) return undefined;
  let value = (b[pos] as number) & max;
  pos++;
  if (value < max) return { value, next: pos };
  let shift = 0;
  for (;;) {
    if (pos >= b.length || shift > 28) return undefined;
    const byte = b[pos] as number;
    pos++;
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if ((byte & 0x80) === 0) return { value, next: pos };
  }
}

export interface HpackString {
  /** Where the string's length prefix starts, and the offset after the string. */
  readonly start: number;
  readonly next: number;
  /** The string's bytes (a view of the block unless Huffman-coded). */
  readonly value: Buffer;
}

/** An HPACK string literal (§5.2), Huffman-decoded if it was coded; undefined if truncated or malformed. */
export function readString(b: Uint8Array, pos: number): HpackString | undefined {
  if (pos >= b.length) return undefined;
  const huffman = ((b[pos] as number) & 0x80) !== 0;
  const len = readInt(b, pos, 7);
  if (!len || len.next + len.value > b.length) return undefined;
  const raw = b.subarray(len.next, len.next + len.value);
  const value = huffman ? huffmanDecode(raw) : Buffer.from(raw.buffer, raw.byteOffset, raw.length);
  return value ? { start: pos, next: len.next + len.value, value } : undefined;
}

/** An HPACK integer with an N-bit prefix, `firstByte` holding the bits above the prefix. */
export function encodeInt(value: number, prefixBits: number, firstByte: number): Buffer {
  const out: number[] = [];
  writeInt(out, value, prefixBits, firstByte);
  return Buffer.from(out);
}

/** A decoded header list: names as sent (lowercase in HTTP/2), values as latin1 strings. */
export type HeaderList = [string, string][];

export class HpackDecoder {
  private readonly table: (readonly [string, string])[] = [];
  private size = 0;
  private pos = 0;
  private block: Uint8Array = new Uint8Array(0);

  /** `maxSize`: the SETTINGS_HEADER_TABLE_SIZE this side announced (4096 unless changed). */
  constructor(private readonly maxSize = 4096) {
    this.limit = maxSize;
  }

  /** The table size the encoder last chose (≤ maxSize). */
  private limit: number;

  decode(block: Uint8Array): HeaderList {
    this.block = block;
    this.pos = 0;
    const out: HeaderList = [];
    let fieldSeen = false;
    while (this.pos < block.length) {
      const b = block[this.pos] as number;
      if (b & 0x80) {
        out.push([...this.entry(this.int(7))] as [string, string]);
        fieldSeen = true;
      } else if ((b & 0xe0) === 0x20) {
        // A size update must come first in a block (§4.2).
        if (fieldSeen) throw new HpackError('dynamic table size update after a header field');
        const n = this.int(5);
        if (n > this.maxSize) throw new HpackError('dynamic table size update above the announced limit');
        this.limit = n;
        this.evict(0);
      } else {
        const indexing = (b & 0xc0) === 0x40;
        const idx = this.int(indexing ? 6 : 4);
        const name = idx === 0 ? this.str() : this.entry(idx)[0];
        const value = this.str();
        out.push([name, value]);
        fieldSeen = true;
        if (indexing) this.add(name, value);
      }
    }
    this.block = new Uint8Array(0);
    return out;
  }

  private entry(i: number): readonly [string, string] {
    if (i >= 1 && i <= STATIC_COUNT) return STATIC[i] as readonly [string, string];
    const e = this.table[i - STATIC_COUNT - 1];
    if (!e) throw new HpackError(`header index ${i} out of range`);
    return e;
  }

  private add(name: string, value: string): void {
    const size = name.length + value.length + ENTRY_OVERHEAD;
    this.evict(size);
    if (size > this.limit) return; // §4.4: an entry larger than the table empties it and is not added
    this.table.unshift([name, value]);
    this.size += size;
  }

  /** Evicts from the end until `room` more bytes fit under the limit. */
  private evict(room: number): void {
    while (this.table.length > 0 && this.size + room > this.limit) {
      const [n, v] = this.table.pop() as readonly [string, string];
      this.size -= n.length + v.length + ENTRY_OVERHEAD;
    }
  }

  private int(prefixBits: number): number {
    const r = readInt(this.block, this.pos, prefixBits);
    if (!r) throw new HpackError('truncated or oversized integer');
    this.pos = r.next;
    return r.value;
  }

  private str(): string {
    const r = readString(this.block, this.pos);
    if (!r) throw new HpackError('truncated string or malformed Huffman code');
    this.pos = r.next;
    return r.value.toString('latin1');
  }
}

function writeInt(out: number[], value: number, prefixBits: number, firstByte: number): void {
  const max = (1 << prefixBits) - 1;
  if (value < max) {
    out.push(firstByte | value);
    return;
  }
  out.push(firstByte | max);
  let rest = value - max;
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  out.push(rest);
}

function writeString(out: number[], s: string): void {
  writeInt(out, s.length, 7, 0);
  for (let i = 0; i < s.length; i++) out.push(s.charCodeAt(i) & 0xff);
}

/**
 * One literal header field, its name from the static table when it is there: "without indexing" (§6.2.2),
 * or "with incremental indexing" (§6.2.1), which adds it to the client's dynamic table.
 */
function writeLiteral(out: number[], name: string, value: string, indexing: boolean): void {
  const [prefixBits, pattern] = indexing ? [6, 0x40] : [4, 0x00];
  const idx = STATIC_NAME_INDEX.get(name);
  if (idx !== undefined) writeInt(out, idx, prefixBits, pattern);
  else {
    out.push(pattern);
    writeString(out, name);
  }
  writeString(out, value);
}

/** A header block of literals "without indexing" (§6.2.2): no table state on either side. */
export function encodeHeaders(fields: Iterable<readonly [string, string]>): Buffer {
  const out: number[] = [];
  for (const [name, value] of fields) writeLiteral(out, name, value, false);
  return Buffer.from(out);
}

/** One header field "with incremental indexing" (§6.2.1), alone in a buffer. */
function indexedLiteral(name: string, value: string): Buffer {
  const out: number[] = [];
  writeLiteral(out, name, value, true);
  return Buffer.from(out);
}

/** The dynamic table's first index (§2.3.3): the newest entry. */
const FIRST_DYNAMIC = STATIC_COUNT + 1;

/**
 * The server's side of the client's dynamic table, for the two header blocks a gRPC server sends most: an
 * OK response's headers (`:status: 200`, `content-type: application/grpc`) and its OK trailers
 * (`grpc-status: 0`). As Go's gRPC server does, content-type and grpc-status go into the table the first
 * time and are sent as one-byte indexes after that; every other block stays literal "without indexing", so
 * the table holds these two entries only (104 bytes), in this order, and never evicts. A client that
 * announces a table smaller than the default 4096 bytes, at any time, gets literals only from then on
 * (after a size update to 0 when entries were already in it).
 */
export class OkBlockEncoder {
  static readonly CONTENT_TYPE: readonly [string, string] = ['content-type', 'application/grpc'];
  static readonly GRPC_STATUS_OK: readonly [string, string] = ['grpc-status', '0'];
  private static readonly LITERAL_HEADERS = encodeHeaders([[':status', '200'], OkBlockEncoder.CONTENT_TYPE]);
  private static readonly LITERAL_TRAILERS = encodeHeaders([OkBlockEncoder.GRPC_STATUS_OK]);
  /** 0x88 is `:status: 200` from the static table; content-type goes into the dynamic table after it. */
  private static readonly FIRST_HEADERS = Buffer.concat([Buffer.from([0x88]), indexedLiteral(...OkBlockEncoder.CONTENT_TYPE)]);
  private static readonly FIRST_TRAILERS = indexedLiteral(...OkBlockEncoder.GRPC_STATUS_OK);
  /** By stage: content-type is the newest entry until grpc-status goes in after it. */
  private static readonly INDEXED_HEADERS = [Buffer.from([0x88, 0x80 | FIRST_DYNAMIC]), Buffer.from([0x88, 0x80 | (FIRST_DYNAMIC + 1)])];
  private static readonly INDEXED_TRAILERS = Buffer.from([0x80 | FIRST_DYNAMIC]);
  /** 0: nothing in the table; 1: content-type; 2: content-type, then grpc-status; -1: literals only. */
  private stage = 0;
  /** A size update to 0 is due at the start of the next block (of any kind). */
  private clearDue = false;

  /** The client's SETTINGS_HEADER_TABLE_SIZE (4096 until it says otherwise). */
  peerTableSize(size: number): void {
    if (this.stage === -1 || size >= 4096) return;
    if (this.stage > 0) this.clearDue = true;
    this.stage = -1;
  }

  headers(): Buffer {
    if (this.stage === -1) return this.block(OkBlockEncoder.LITERAL_HEADERS);
    if (this.stage === 0) {
      this.stage = 1;
      return OkBlockEncoder.FIRST_HEADERS;
    }
    return OkBlockEncoder.INDEXED_HEADERS[this.stage - 1] as Buffer;
  }

  trailers(): Buffer {
    if (this.stage === 1) {
      this.stage = 2;
      return OkBlockEncoder.FIRST_TRAILERS;
    }
    if (this.stage === 2) return OkBlockEncoder.INDEXED_TRAILERS;
    return this.block(OkBlockEncoder.LITERAL_TRAILERS);
  }

  /** Any block about to be sent: with the size update in front when one is due. */
  block(b: Buffer): Buffer {
    if (!this.clearDue) return b;
    this.clearDue = false;
    return Buffer.concat([Buffer.from([0x20]), b]);
  }
}
