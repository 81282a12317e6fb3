// A ConfChange travels in a log entry's data, so its encoding is an on-disk format (src/raft/types.ts says
// its version rule). Frozen samples, as written by storage format version 3: each must decode to its
// change and be encoded as exactly these bytes. The ids are etcd's, two of them past 2^53 and one past 2^63.
import { describe, expect, it } from 'vitest';
import type { ConfChange } from '../../src/raft/types.js';
import { decodeConfChange, encodeConfChange } from '../../src/raft/types.js';

const SAMPLES: readonly { readonly change: ConfChange; readonly json: string }[] = [
  { change: { type: 'addNode', nodeId: 0x8027cae8a0e355ean }, json: '{"type":"addNode","nodeId":"9234572661426968042"}' },
  { change: { type: 'addLearner', nodeId: 0xcfa6ba5483271eb1n, context: new TextEncoder().encode('ctx') }, json: '{"type":"addLearner","nodeId":"14962851684125449905","ctx":"637478"}' },
  { change: { type: 'removeNode', nodeId: 0x298da9a3f41493cdn }, json: '{"type":"removeNode","nodeId":"2994235848911000525"}' },
];

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const plain = (cc: ConfChange): object => (cc.context ? { ...cc, context: Buffer.from(cc.context) } : cc);

describe('conf change entries (storage format version 3)', () => {
  it.each(SAMPLES.map((s) => [s.json, s] as const))('%s decodes to its change and is written as it', (_json, s) => {
    expect(plain(decodeConfChange(utf8(s.json)))).toEqual(plain(s.change));
    expect(new TextDecoder().decode(encodeConfChange(s.change))).toBe(s.json);
  });

  it('refuses what is not a conf change of this version: a numeric id (version 2), no id, an id past uint64, bad context', () => {
    for (const bad of [
      '{"type":"addNode","nodeId":2}',
      '{"type":"addNode"}',
      '{"type":"addNode","nodeId":"0"}',
      '{"type":"addNode","nodeId":"18446744073709551616"}',
      '{"type":"addNode","nodeId":"007"}',
      '{"type":"addNode","nodeId":"7","ctx":"zz"}',
      '{"type":"promote","nodeId":"7"}',
    ]) {
      expect(() => decodeConfChange(utf8(bad)), bad).toThrow(/raft: bad conf change/);
    }
  });
});
