// clientv3 dials single endpoints (etcdctl endpoint status, endpoint hashkv, defrag) as
// "passthrough:///http://host:port", and grpc-go then sends that whole URL as the request's :authority.
// Go's HTTP/2 server accepts it; Node's (nghttp2) resets any stream whose :authority has a character an
// authority may not hold ('/' here). So before the bytes reach Node, this rewrites such an :authority in
// the client's HEADERS frames, character for character ('/' → '_'), keeping the value's length so both
// sides' HPACK dynamic tables keep the same sizes. Everything else passes through untouched.
import { encodeInt, readInt, readString } from './hpack.js';
import { F_ACK, F_END_HEADERS, F_PADDED, F_PRIORITY, FRAME_HEADER_LEN, HTTP2_PREFACE, T_HEADERS, T_SETTINGS } from './frames.js';

/** ":authority" is entry 1 of HPACK's static table. */
const STATIC_AUTHORITY = 1;

/** nghttp2's authority characters: RFC 3986 unreserved, sub-delims, ':', '@', '[', ']', '%'. */
const VALID = new Uint8Array(256);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@[]%") VALID[c.charCodeAt(0)] = 1;

function validAuthority(v: Uint8Array): boolean {
  for (const c of v) if (!VALID[c]) return false;
  return true;
}

/**
 * The header block with every literal :authority made valid, or undefined when nothing needed it (or
 * the block could not be read, in which case it goes on unchanged and Node judges it).
 */
export function fixAuthority(block: Uint8Array): Buffer | undefined {
  const parts: Buffer[] = [];
  let copied = 0;
  let pos = 0;
  while (pos < block.length) {
    const first = block[pos] as number;
    let prefix: number;
    if (first & 0x80) prefix = 7; // indexed field: nothing literal to look at
    else if ((first & 0xe0) === 0x20) prefix = 5; // dynamic table size update
    else if ((first & 0xc0) === 0x40) prefix = 6; // literal with incremental indexing
    else prefix = 4; // literal without indexing / never indexed
    const idx = readInt(block, pos, prefix);
    if (!idx) return undefined;
    pos = idx.next;
    if (prefix === 7 || prefix === 5) continue;
    let isAuthority = idx.value === STATIC_AUTHORITY;
    if (idx.value === 0) {
      const name = readString(block, pos);
      if (!name) return undefined;
      isAuthority = name.value.toString('latin1') === ':authority';
      pos = name.next;
    }
    const value = readString(block, pos);
    if (!value) return undefined;
    pos = value.next;
    if (!isAuthority || validAuthority(value.value)) continue;
    const fixed = Buffer.from(value.value.map((c) => (VALID[c] ? c : 0x5f)));
    parts.push(Buffer.from(block.subarray(copied, value.start)), encodeInt(fixed.length, 7, 0), fixed);
    copied = value.next;
  }
  if (parts.length === 0) return undefined;
  parts.push(Buffer.from(block.subarray(copied)));
  return Buffer.concat(parts);
}

/**
 * Where the header block of a complete HEADERS frame lies (after padding length and priority, before
 * padding), or undefined when it continues in CONTINUATION frames or the frame is malformed.
 */
export function headerBlockBounds(frame: Uint8Array): { start: number; end: number } | undefined {
  const flags = frame[4] as number;
  if ((flags & F_END_HEADERS) === 0) return undefined;
  let start = FRAME_HEADER_LEN;
  let padLen = 0;
  if (flags & F_PADDED) {
    padLen = frame[start] as number;
    start++;
  }
  if (flags & F_PRIORITY) start += 5;
  const end = frame.length - padLen;
  return end >= start ? { start, end } : undefined;
}

/** Rebuilds a complete HEADERS frame around a rewritten header block, keeping its padding and priority. */
function rewriteHeadersFrame(frame: Buffer): Buffer {
  const bounds = headerBlockBounds(frame);
  if (!bounds) return frame; // continued in CONTINUATION frames (or malformed): left alone
  const { start, end } = bounds;
  const block = fixAuthority(frame.subarray(start, end));
  if (!block) return frame;
  const payloadLen = start - FRAME_HEADER_LEN + block.length + (frame.length - end);
  const out = Buffer.concat([frame.subarray(0, start), block, frame.subarray(end)]);
  out.writeUIntBE(payloadLen, 0, 3);
  return out;
}

/**
 * A stateful filter for the client-to-server bytes of one HTTP/2 connection: feed it chunks in order,
 * send on what it returns. Only HEADERS frames are held until complete; the rest streams through.
 */
export class AuthorityFixer {
  private prefaceLeft = HTTP2_PREFACE.length;
  /** Bytes of a frame header, or of a whole HEADERS frame, still being gathered. */
  private pending: Buffer | undefined;
  /** Payload bytes of a non-HEADERS frame still to pass through. */
  private passLeft = 0;

  /** dropSettingsAck: the next empty SETTINGS ACK answers a frame the server behind never sent; drop it. */
  constructor(private dropSettingsAck = false) {}

  push(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    let pos = 0;
    if (this.prefaceLeft > 0) {
      const n = Math.min(this.prefaceLeft, chunk.length);
      out.push(chunk.subarray(0, n));
      this.prefaceLeft -= n;
      pos = n;
    }
    while (pos < chunk.length) {
      if (this.passLeft > 0) {
        const n = Math.min(this.passLeft, chunk.length - pos);
        out.push(chunk.subarray(pos, pos + n));
        this.passLeft -= n;
        pos += n;
        continue;
      }
      const have = this.pending ? this.pending.length : 0;
      // Gather the 9-byte frame header first.
      if (have < FRAME_HEADER_LEN) {
        const n = Math.min(FRAME_HEADER_LEN - have, chunk.length - pos);
        this.pending = Buffer.concat([this.pending ?? Buffer.alloc(0), chunk.subarray(pos, pos + n)]);
        pos += n;
        if (this.pending.length < FRAME_HEADER_LEN) break;
      }
      const head = this.pending as Buffer;
      const length = head.readUIntBE(0, 3);
      if (this.dropSettingsAck && head[3] === T_SETTINGS && ((head[4] as number) & F_ACK) !== 0 && length === 0) {
        this.dropSettingsAck = false;
        this.pending = undefined;
        continue;
      }
      if (head[3] !== T_HEADERS) {
        out.push(head.subarray(0, FRAME_HEADER_LEN));
        this.pending = undefined;
        this.passLeft = length;
        continue;
      }
      const total = FRAME_HEADER_LEN + length;
      const n = Math.min(total - head.length, chunk.length - pos);
      this.pending = Buffer.concat([head, chunk.subarray(pos, pos + n)]);
      pos += n;
      if (this.pending.length < total) break;
      out.push(rewriteHeadersFrame(this.pending));
      this.pending = undefined;
    }
    return out;
  }
}
