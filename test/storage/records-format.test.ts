// The write-ahead log's records are an on-disk format (src/storage/records.ts says its version rule):
// one frozen sample of every record kind, as bytes. Each must still read back as its value — a change
// that could no longer read a log written by this version fails here — and the writer must still write
// exactly these bytes, so a change to what it writes is seen and given a new sample (and, if old logs
// would read differently, a new FORMAT_VERSION). Samples of a version stay while that version is read.
// Ids are etcd's: 0x8027cae8a0e355ea and 0xcfa6ba5483271eb1 (past 2^63, msgpack uint 64), and
// 0x298da9a3f41493cd (below, int 64).
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../src/raft/types.js';
import { decodeConfChange } from '../../src/raft/types.js';
import {
  FORMAT_VERSION,
  RecordType,
  compactCodec,
  confStateClearCodec,
  confStateCodec,
  formatCodec,
  frameEntry,
  hardStateCodec,
  openEntry,
  readFrame,
  resetCodec,
  snapshotCodec,
} from '../../src/storage/records.js';
import type { MetaCodec } from '../../src/storage/records.js';

const A = 0x8027cae8a0e355ean;
const B = 0xcfa6ba5483271eb1n;
const C = 0x298da9a3f41493cdn;

interface MetaSample<T> {
  readonly name: string;
  readonly codec: MetaCodec<T>;
  readonly value: T;
  readonly hex: string;
}

const meta = <T>(name: string, codec: MetaCodec<T>, value: T, hex: string): MetaSample<unknown> => ({ name, codec, value, hex }) as MetaSample<unknown>;

/** Version 3: the format this code writes. */
const V3_META: readonly MetaSample<unknown>[] = [
  meta('format', formatCodec, { magic: 'setpoint-raft', version: 3, seq: 1 }, '260000002ebe6a1501de0003a56d61676963ad736574706f696e742d72616674a776657273696f6e03a373657101'),
  meta('hard state, vote past 2^63', hardStateCodec, { term: 3, vote: A, commit: 6 }, '2000000070b9c39b03de0003a47465726d03a4766f7465cf8027cae8a0e355eaa6636f6d6d697406'),
  meta('hard state, another vote', hardStateCodec, { term: 4, vote: B, commit: 9 }, '200000005c31691503de0003a47465726d04a4766f7465cfcfa6ba5483271eb1a6636f6d6d697409'),
  meta('hard state, no vote', hardStateCodec, { term: 1, vote: 0n, commit: 1 }, '200000000d0b22f703de0003a47465726d01a4766f7465d30000000000000000a6636f6d6d697401'),
  meta('conf state', confStateCodec, { voters: [C, A], learners: [B] }, '3100000032d04cb304de0002a6766f7465727392d3298da9a3f41493cdcf8027cae8a0e355eaa86c6561726e65727391cfcfa6ba5483271eb1'),
  meta('conf state clear', confStateClearCodec, {}, '0400000014378d9105de0000'),
  meta('compact', compactCodec, { index: 4, term: 2 }, '110000009c73fc2c06de0002a5696e64657804a47465726d02'),
  meta('reset', resetCodec, { index: 9, term: 3 }, '1100000089e98abd07de0002a5696e64657809a47465726d03'),
  meta(
    'snapshot',
    snapshotCodec,
    { index: 9, term: 3, confState: { voters: [C, A, B], learners: [] }, size: 123, crc: 0xdeadbeef },
    '5a0000001e7f40be08de0005a5696e64657809a47465726d03a9636f6e665374617465de0002a6766f7465727393d3298da9a3f41493cdcf8027cae8a0e355eacfcfa6ba5483271eb1a86c6561726e65727390a473697a657ba3637263cedeadbeef',
  ),
];

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

const V3_ENTRIES: readonly { name: string; entry: Entry; hex: string }[] = [
  { name: 'normal entry', entry: { term: 2, index: 5, type: 'normal', data: utf8('put k=v') }, hex: '19000000a7ef3ecd020000000000000000050000000000000002707574206b3d76' },
  { name: "leader's empty entry, the largest safe index", entry: { term: 3, index: 2 ** 53 - 1, type: 'normal', data: new Uint8Array() }, hex: '12000000c1f4606d0200001fffffffffffff0000000000000003' },
  {
    name: 'conf change entry',
    entry: { term: 3, index: 7, type: 'confChange', data: utf8('{"type":"addLearner","nodeId":"14962851684125449905"}') },
    hex: '4700000086bc4b020201000000000000000700000000000000037b2274797065223a226164644c6561726e6572222c226e6f64654964223a223134393632383531363834313235343439393035227d',
  },
];

function record(hex: string): { type: number; payload: Buffer } {
  const f = readFrame(Buffer.from(hex, 'hex'), 0);
  if (f.kind !== 'record') throw new Error(`not a sound record: ${JSON.stringify(f)}`);
  expect(f.next).toBe(hex.length / 2);
  return f;
}

describe(`write-ahead log records, format version ${FORMAT_VERSION}`, () => {
  it('is version 3: a new version adds its samples here and keeps (or refuses) the old ones', () => {
    expect(FORMAT_VERSION).toBe(3);
  });

  it.each(V3_META.map((s) => [s.name, s] as const))('%s reads back from its frozen bytes, and is written as them', (_name, s) => {
    const r = record(s.hex);
    expect(r.type).toBe(s.codec.type);
    expect(s.codec.open(r.payload)).toEqual(s.value);
    expect(s.codec.frame(s.value).toString('hex')).toBe(s.hex);
  });

  it.each(V3_ENTRIES.map((s) => [s.name, s] as const))('%s reads back from its frozen bytes, and is written as them', (_name, s) => {
    const r = record(s.hex);
    expect(r.type).toBe(RecordType.entry);
    const e = openEntry(r.payload);
    expect({ ...e, data: Buffer.from(e.data) }).toEqual({ ...s.entry, data: Buffer.from(s.entry.data) });
    expect(frameEntry(s.entry).toString('hex')).toBe(s.hex);
  });

  it('ids come back whole, as bigints (a Number would round A and A+1 to one value)', () => {
    const hs = hardStateCodec.open(record(V3_META[1]?.hex ?? '').payload);
    expect(typeof hs.vote).toBe('bigint');
    expect(hs.vote).toBe(A);
    expect(decodeConfChange((V3_ENTRIES[2] as { entry: Entry }).entry.data)).toEqual({ type: 'addLearner', nodeId: B });
  });

  it('refuses version 2 records: ids as msgpack numbers', () => {
    // Version 2's hard state: {term: 3, vote: 5, commit: 6}, the vote a positive fixint.
    const v2 = hardStateCodec.frame({ term: 3, vote: 5n, commit: 6 }).toString('hex').replace('a4766f7465d30000000000000005', 'a4766f746505');
    expect(() => hardStateCodec.open(Buffer.from(v2, 'hex').subarray(9))).toThrow(/field 'vote' is not a node id/);
  });
});
