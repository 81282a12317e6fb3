// HPACK (RFC 7541) for the client port's own HTTP/2 server (http2/server-connection.ts): a decoder with the
// dynamic table a client's encoder fills, with limits on what a block may decode to, and an encoder that
// writes every field as a literal never added to the table, except the two fields of the response sent
// most (OkBlockEncoder), which it keeps in the client's table and sends as one-byte indexes.
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

/** An HPACK integer with an N-bit prefix, `firstByte` holding the bits above the prefix. */
export function encodeInt(value: number, prefixBits: number, firstByte: number): Buffer {
  const out: number[] = [];
  writeInt(out, value, prefixBits, firstByte);
  return Buffer.from(out);
}

/** One decoded field: its name as sent (lowercase in HTTP/2) and its value, both latin1 strings. */
export type HeaderField = readonly [name: string, value: string];
/** A decoded header list. Fields are shared with the decoder's tables: never modify one. */
export type HeaderList = readonly HeaderField[];

export interface DecodedBlock {
  readonly fields: HeaderList;
  /** The list went past the limits decode() was given: `fields` holds only the fields before that. */
  readonly tooLarge: boolean;
}

export class HpackDecoder {
  /**
   * The dynamic table as a ring: `count` entries, the newest at `head` (§2.3.3 numbers them from the
   * newest), so that adding and evicting move nothing. Every entry is at least 32 bytes: the ring holds
   * maxSize / 32 of them at most.
   */
  private readonly ring: (HeaderField | undefined)[];
  private head = -1;
  private count = 0;
  private size = 0;
  private pos = 0;
  private block: Buffer = Buffer.alloc(0);

  /** `maxSize`: the SETTINGS_HEADER_TABLE_SIZE this side announced (4096 unless changed). */
  constructor(private readonly maxSize = 4096) {
    this.limit = maxSize;
    this.ring = new Array<HeaderField | undefined>(Math.floor(maxSize / ENTRY_OVERHEAD) + 1);
  }

  /** The table size the encoder last chose (≤ maxSize). */
  private limit: number;

  /**
   * Decodes a whole block. Past `maxPairs` fields or `maxSize` bytes of header list (RFC 7541 §4.1: name,
   * value and 32 per field) it keeps reading, so that the table follows the client's encoder, but keeps no
   * more fields and says the list was too large: the work stays bounded by the block's length however many
   * fields a few bytes of it name.
   */
  decode(block: Uint8Array, maxPairs = Number.POSITIVE_INFINITY, maxSize = Number.POSITIVE_INFINITY): DecodedBlock {
    this.block = Buffer.isBuffer(block) ? block : Buffer.from(block.buffer, block.byteOffset, block.length);
    this.pos = 0;
    const fields: HeaderField[] = [];
    let size = 0;
    let tooLarge = false;
    let fieldSeen = false;
    while (this.pos < block.length) {
      const b = block[this.pos] as number;
      let field: HeaderField;
      if (b & 0x80) {
        field = this.entry(this.int(7));
      } else if ((b & 0xe0) === 0x20) {
        // A size update must come first in a block (§4.2).
        if (fieldSeen) throw new HpackError('dynamic table size update after a header field');
        const n = this.int(5);
        if (n > this.maxSize) throw new HpackError('dynamic table size update above the announced limit');
        this.limit = n;
        this.evict(0);
        continue;
      } else {
        const indexing = (b & 0xc0) === 0x40;
        const idx = this.int(indexing ? 6 : 4);
        const name = idx === 0 ? this.str() : this.entry(idx)[0];
        field = [name, this.str()];
        if (indexing) this.add(field);
      }
      fieldSeen = true;
      if (tooLarge) continue;
      size += field[0].length + field[1].length + ENTRY_OVERHEAD;
      if (fields.length >= maxPairs || size > maxSize) tooLarge = true;
      else fields.push(field);
    }
    this.block = Buffer.alloc(0);
    return { fields, tooLarge };
  }

  private entry(i: number): HeaderField {
    if (i >= 1 && i <= STATIC_COUNT) return STATIC[i] as HeaderField;
    const k = i - STATIC_COUNT - 1;
    if (k < 0 || k >= this.count) throw new HpackError(`header index ${i} out of range`);
    return this.ring[(this.head - k + this.ring.length) % this.ring.length] as HeaderField;
  }

  private add(field: HeaderField): void {
    const size = field[0].length + field[1].length + ENTRY_OVERHEAD;
    this.evict(size);
    if (size > this.limit) return; // §4.4: an entry larger than the table empties it and is not added
    this.head = (this.head + 1) % this.ring.length;
    this.ring[this.head] = field;
    this.count++;
    this.size += size;
  }

  /** Evicts the oldest entries until `room` more bytes fit under the limit. */
  private evict(room: number): void {
    while (this.count > 0 && this.size + room > this.limit) {
      const oldest = (this.head - this.count + 1 + this.ring.length) % this.ring.length;
      const [n, v] = this.ring[oldest] as HeaderField;
      this.ring[oldest] = undefined;
      this.count--;
      this.size -= n.length + v.length + ENTRY_OVERHEAD;
    }
  }

  /** An integer with an N-bit prefix (§5.1) at `pos`, which moves past it. */
  private int(prefixBits: number): number {
    const b = this.block;
    const max = (1 << prefixBits) - 1;
    let pos = this.pos;
    if (pos >= b.length) throw new HpackError('truncated integer');
    let value = (b[pos++] as number) & max;
    if (value === max) {
      for (let shift = 0; ; shift += 7) {
        if (pos >= b.length || shift > 28) throw new HpackError('truncated or oversized integer');
        const byte = b[pos++] as number;
        value += (byte & 0x7f) * 2 ** shift;
        if ((byte & 0x80) === 0) break;
      }
    }
    this.pos = pos;
    return value;
  }

  /** A string literal (§5.2) at `pos`, Huffman-decoded if it was coded, as latin1. */
  private str(): string {
    const b = this.block;
    if (this.pos >= b.length) throw new HpackError('truncated string');
    const huffman = ((b[this.pos] as number) & 0x80) !== 0;
    const len = this.int(7);
    const start = this.pos;
    const end = start + len;
    if (end > b.length) throw new HpackError('truncated string');
    this.pos = end;
    if (len === 0) return '';
    if (!huffman) return b.toString('latin1', start, end);
    const value = huffmanDecode(b.subarray(start, end));
    if (!value) throw new HpackError('malformed Huffman code');
    return value.toString('latin1');
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
 * The blocks of the response a server sends most, precomputed: its headers (`:status: 200` and one more
 * field, `headerField`) and its trailers (one field, `trailerField`), literal and indexed (gRPC's OK
 * answer: content-type, then grpc-status). One of these serves every connection's OkBlockEncoder.
 */
export class OkBlocks {
  readonly literalHeaders: Buffer;
  readonly literalTrailers: Buffer;
  /** 0x88 is `:status: 200` from the static table; the header field goes into the dynamic table after it. */
  readonly firstHeaders: Buffer;
  readonly firstTrailers: Buffer;
  /** By stage: the header field is the newest entry until the trailer field goes in after it. */
  readonly indexedHeaders: readonly [Buffer, Buffer];
  readonly indexedTrailers: Buffer;

  constructor(
    readonly headerField: HeaderField,
    readonly trailerField: HeaderField,
  ) {
    this.literalHeaders = encodeHeaders([[':status', '200'], headerField]);
    this.literalTrailers = encodeHeaders([trailerField]);
    this.firstHeaders = Buffer.concat([Buffer.from([0x88]), indexedLiteral(...headerField)]);
    this.firstTrailers = indexedLiteral(...trailerField);
    this.indexedHeaders = [Buffer.from([0x88, 0x80 | FIRST_DYNAMIC]), Buffer.from([0x88, 0x80 | (FIRST_DYNAMIC + 1)])];
    this.indexedTrailers = Buffer.from([0x80 | FIRST_DYNAMIC]);
  }
}

/**
 * The server's side of the client's dynamic table, for the two blocks of OkBlocks. As Go's gRPC server
 * does, the two fields go into the table the first time and are sent as one-byte indexes after that;
 * every other block stays literal "without indexing", so the table holds these two entries only (about a
 * hundred bytes), in this order, and never evicts. A client that announces a table smaller than the
 * default 4096 bytes, at any time, gets literals only from then on (after a size update to 0 when entries
 * were already in it).
 */
export class OkBlockEncoder {
  /** 0: nothing in the table; 1: the header field; 2: it, then the trailer field; -1: literals only. */
  private stage = 0;
  /** A size update to 0 is due at the start of the next block (of any kind). */
  private clearDue = false;

  constructor(private readonly blocks: OkBlocks) {}

  /** The client's SETTINGS_HEADER_TABLE_SIZE (4096 until it says otherwise). */
  peerTableSize(size: number): void {
    if (this.stage === -1 || size >= 4096) return;
    if (this.stage > 0) this.clearDue = true;
    this.stage = -1;
  }

  headers(): Buffer {
    if (this.stage === -1) return this.block(this.blocks.literalHeaders);
    if (this.stage === 0) {
      this.stage = 1;
      return this.blocks.firstHeaders;
    }
    return this.blocks.indexedHeaders[this.stage - 1] as Buffer;
  }

  trailers(): Buffer {
    if (this.stage === 1) {
      this.stage = 2;
      return this.blocks.firstTrailers;
    }
    if (this.stage === 2) return this.blocks.indexedTrailers;
    return this.block(this.blocks.literalTrailers);
  }

  /** Any block about to be sent: with the size update in front when one is due. */
  block(b: Buffer): Buffer {
    if (!this.clearDue) return b;
    this.clearDue = false;
    return Buffer.concat([Buffer.from([0x20]), b]);
  }
}
