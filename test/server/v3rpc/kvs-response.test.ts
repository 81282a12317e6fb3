// The sliced RangeResponse and DeleteRangeResponse encoders (v3rpc/kvs-response.ts) decode to the same
// fields as protobufjs' encoding of the same response, for arbitrary key-values (empty keys and values,
// leases as uint64 strings, revisions up to 2^53), and for more key-values than one slice holds.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { etcdPackageDefinition } from '../../../src/server/v3rpc/etcd-proto.js';
import { wireHeader, wireKv } from '../../../src/server/v3rpc/etcd-wire.js';
import { encodeDeleteRangeResponse, encodeRangeResponse } from '../../../src/server/v3rpc/kvs-response.js';
import type { KeyValue } from '../../../src/kv/types.js';
import type { Header } from '../../../src/server/member/store-api.js';

interface Codec {
  responseSerialize(o: object): Buffer;
  responseDeserialize(b: Buffer): object;
}
const kvDef = etcdPackageDefinition()['etcdserverpb.KV'] as unknown as { Range: Codec; DeleteRange: Codec };

const rev = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
const kv: fc.Arbitrary<KeyValue> = fc.record({
  key: fc.uint8Array({ maxLength: 20 }).map((b) => Buffer.from(b)),
  createRevision: rev,
  modRevision: rev,
  version: fc.integer({ min: 0, max: 1_000_000 }),
  value: fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
  lease: fc.oneof(fc.constant('0'), fc.bigInt({ min: 1n, max: 2n ** 63n - 1n }).map(String)),
});
const header: fc.Arbitrary<Header> = fc.record({
  clusterId: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
  memberId: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
  revision: rev,
  raftTerm: fc.integer({ min: 0, max: 2 ** 40 }),
});

const many = (n: number): KeyValue[] =>
  Array.from({ length: n }, (_, i) => ({ key: Buffer.from(`big/${i}`), createRevision: i + 2, modRevision: i + 2, version: 1, value: Buffer.from(`v${i}`), lease: '0' }));

describe('sliced key-value responses', () => {
  it('a RangeResponse decodes to what protobufjs encodes', async () => {
    await fc.assert(
      fc.asyncProperty(header, fc.array(kv, { maxLength: 6 }), fc.boolean(), fc.nat(), async (h, kvs, more, count) => {
        const ours = await encodeRangeResponse(h, kvs, more, count);
        const theirs = kvDef.Range.responseSerialize({ header: wireHeader(h, h.revision), kvs: kvs.map(wireKv), more, count });
        expect(kvDef.Range.responseDeserialize(ours)).toEqual(kvDef.Range.responseDeserialize(theirs));
      }),
      { numRuns: 300 },
    );
  });

  it('a DeleteRangeResponse decodes to what protobufjs encodes', async () => {
    await fc.assert(
      fc.asyncProperty(header, fc.array(kv, { maxLength: 6 }), fc.nat(), async (h, prevKvs, deleted) => {
        const ours = await encodeDeleteRangeResponse(h, deleted, prevKvs);
        const theirs = kvDef.DeleteRange.responseSerialize({ header: wireHeader(h, h.revision), deleted, prevKvs: prevKvs.map(wireKv) });
        expect(kvDef.DeleteRange.responseDeserialize(ours)).toEqual(kvDef.DeleteRange.responseDeserialize(theirs));
      }),
      { numRuns: 300 },
    );
  });

  it('encodes more key-values than one slice holds, in order', async () => {
    const h: Header = { clusterId: '1', memberId: '2', revision: 70_000, raftTerm: 3 };
    const kvs = many(50_000);
    const decoded = kvDef.Range.responseDeserialize(await encodeRangeResponse(h, kvs, true, 60_000)) as { kvs: { key: Buffer }[]; more: boolean; count: string };
    expect(decoded.kvs.length).toBe(50_000);
    expect(decoded.kvs[49_999]?.key.toString()).toBe('big/49999');
    expect([decoded.more, decoded.count]).toEqual([true, '60000']);
    const del = kvDef.DeleteRange.responseDeserialize(await encodeDeleteRangeResponse(h, 50_000, kvs)) as { prevKvs: unknown[]; deleted: string };
    expect([del.prevKvs.length, del.deleted]).toEqual([50_000, '50000']);
  });
});
