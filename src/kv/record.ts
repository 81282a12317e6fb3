// One revision's record in the backend, in a fixed binary layout: decoding it on start-up (a million of
// them) must be cheap, so fields sit at known offsets and strings are sliced straight out of the buffer.
//
//   u8 flags (1 = tombstone) | f64 createRevision | f64 version | u16 leaseLen | lease (ascii decimal)
//   | u32 keyLen | key | value
// The mod revision is not stored: it is the record's own key.

export interface RecordFields {
  readonly key: Uint8Array;
  readonly value: Uint8Array;
  readonly createRevision: number;
  readonly version: number;
  readonly lease: string;
  readonly tombstone: boolean;
}

const HEADER = 1 + 8 + 8 + 2;

/** The length encodeRecord gives a record of these field lengths (byte lengths; the lease is ASCII). */
export function recordLength(keyLen: number, valueLen: number, leaseLen: number): number {
  return HEADER + leaseLen + 4 + keyLen + valueLen;
}

export function encodeRecord(r: RecordFields): Buffer {
  const leaseLen = r.lease.length;
  const b = Buffer.allocUnsafe(recordLength(r.key.length, r.value.length, leaseLen));
  b[0] = r.tombstone ? 1 : 0;
  b.writeDoubleBE(r.createRevision, 1);
  b.writeDoubleBE(r.version, 9);
  b.writeUInt16BE(leaseLen, 17);
  let at = HEADER;
  at += b.write(r.lease, at, 'latin1');
  b.writeUInt32BE(r.key.length, at);
  at += 4;
  b.set(r.key, at);
  at += r.key.length;
  b.set(r.value, at);
  return b;
}

function layout(b: Buffer): { leaseEnd: number; keyStart: number; keyEnd: number } {
  const leaseEnd = HEADER + b.readUInt16BE(17);
  const keyLen = b.readUInt32BE(leaseEnd);
  const keyStart = leaseEnd + 4;
  const keyEnd = keyStart + keyLen;
  if (keyEnd > b.length) throw new Error('kv: truncated record');
  return { leaseEnd, keyStart, keyEnd };
}

/** The fields, with key and value as views into the record (no copies). */
export function decodeRecord(b: Buffer): RecordFields {
  const { leaseEnd, keyStart, keyEnd } = layout(b);
  return {
    tombstone: b[0] === 1,
    createRevision: b.readDoubleBE(1),
    version: b.readDoubleBE(9),
    lease: b.toString('latin1', HEADER, leaseEnd),
    key: b.subarray(keyStart, keyEnd),
    value: b.subarray(keyEnd),
  };
}

/** The fields with key and value as latin1 strings (what the in-memory index keeps), for start-up. */
export function decodeRecordStrings(b: Buffer): { key: string; value: string; createRevision: number; version: number; lease: string; tombstone: boolean } {
  const { leaseEnd, keyStart, keyEnd } = layout(b);
  return {
    tombstone: b[0] === 1,
    createRevision: b.readDoubleBE(1),
    version: b.readDoubleBE(9),
    lease: leaseEnd === HEADER + 1 && b[HEADER] === 0x30 ? '0' : b.toString('latin1', HEADER, leaseEnd),
    key: b.toString('latin1', keyStart, keyEnd),
    value: b.toString('latin1', keyEnd),
  };
}

/** Just the key, as a latin1 string (hashing needs only that). */
export function recordKey(b: Buffer): string {
  const { keyStart, keyEnd } = layout(b);
  return b.toString('latin1', keyStart, keyEnd);
}
