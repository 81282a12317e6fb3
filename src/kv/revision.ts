// A revision {main, sub}: main is the store-wide revision a write transaction created, sub the position
// of a change within it. Backend keys encode it big-endian so byte order is revision order.

export interface Revision {
  readonly main: number;
  readonly sub: number;
}

/** 'r' + 8-byte main + 8-byte sub: records in the backend sort by revision. */
export const REV_KEY_LEN = 17;
export const REV_PREFIX = 0x72; // 'r'

export function revKey(main: number, sub: number): Buffer {
  const b = Buffer.allocUnsafe(REV_KEY_LEN);
  b[0] = REV_PREFIX;
  writeU64(b, 1, main);
  writeU64(b, 9, sub);
  return b;
}

export function parseRevKey(b: Uint8Array): Revision {
  const buf = Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  return { main: readU64(buf, 1), sub: readU64(buf, 9) };
}

// Revisions stay below 2^53, so two 32-bit halves avoid BigInt on the hot path.
function writeU64(b: Buffer, at: number, n: number): void {
  b.writeUInt32BE(Math.floor(n / 0x100000000), at);
  b.writeUInt32BE(n >>> 0, at + 4);
}

function readU64(b: Buffer, at: number): number {
  return b.readUInt32BE(at) * 0x100000000 + b.readUInt32BE(at + 4);
}

export function compareRev(a: Revision, b: Revision): number {
  return a.main !== b.main ? a.main - b.main : a.sub - b.sub;
}
