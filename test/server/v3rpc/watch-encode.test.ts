// The hand-written WatchResponse encoder's bytes decode to the same fields as protobufjs' encoding of the
// same message (protobufjs also writes explicit zeros, which proto3 omits; decoders read both the same), for arbitrary responses (ids negative and large, leases as uint64 strings,
// empty keys and values, prev_kv, every flag).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { etcdPackageDefinition } from '../../../src/server/v3rpc/etcd-proto.js';
import { wireEvent, wireHeader } from '../../../src/server/v3rpc/etcd-wire.js';
import { WatchResponseEncoder, encodeHeaderField } from '../../../src/server/v3rpc/watch-encode.js';
import { materialize } from '../../../src/server/grpc/bidi.js';
import type { KeyValue, KvEvent } from '../../../src/kv/types.js';
import type { WatchResponse } from '../../../src/watch/types.js';
import type { Header } from '../../../src/server/member/store-api.js';

interface Codec {
  responseSerialize(o: object): Buffer;
  responseDeserialize(b: Buffer): object;
}
const watch = (etcdPackageDefinition()['etcdserverpb.Watch'] as unknown as { Watch: Codec }).Watch;
const put = (etcdPackageDefinition()['etcdserverpb.KV'] as unknown as { Put: Codec }).Put;

const rev = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
const kv: fc.Arbitrary<KeyValue> = fc.record({
  key: fc.uint8Array({ maxLength: 20 }),
  createRevision: rev,
  modRevision: rev,
  version: fc.integer({ min: 0, max: 1_000_000 }),
  value: fc.uint8Array({ maxLength: 300 }),
  lease: fc.oneof(fc.constant('0'), fc.bigInt({ min: 1n, max: 2n ** 63n - 1n }).map(String)),
});
const event: fc.Arbitrary<KvEvent> = fc.record({ type: fc.constantFrom('PUT' as const, 'DELETE' as const), kv, prevKv: fc.option(kv, { nil: undefined }) }).map((e): KvEvent =>
  e.prevKv ? { type: e.type, kv: e.kv, prevKv: e.prevKv } : { type: e.type, kv: e.kv },
);
const header: fc.Arbitrary<Header> = fc.record({
  clusterId: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
  memberId: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
  revision: rev,
  raftTerm: fc.integer({ min: 0, max: 2 ** 40 }),
});
const response: fc.Arbitrary<WatchResponse> = fc.record({
  header: fc.record({ revision: rev }),
  watchId: fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: 2 ** 40 })),
  created: fc.boolean(),
  canceled: fc.boolean(),
  compactRevision: rev,
  cancelReason: fc.oneof(fc.constant(''), fc.string({ maxLength: 40 })),
  fragment: fc.boolean(),
  events: fc.array(event, { maxLength: 4 }),
});

/** The same response through the proto definitions, as the service wrote it before the encoder existed. */
function viaProtobufjs(h: Header, r: WatchResponse): Buffer {
  return watch.responseSerialize({
    header: wireHeader(h, r.header.revision),
    watchId: r.watchId,
    created: r.created,
    canceled: r.canceled,
    compactRevision: r.compactRevision,
    cancelReason: r.cancelReason,
    fragment: r.fragment,
    events: r.events.map(wireEvent),
  });
}

describe('WatchResponseEncoder', () => {
  it('decodes to what protobufjs encodes from the same response', () => {
    const enc = new WatchResponseEncoder();
    fc.assert(
      fc.property(header, response, (h, r) => {
        const hh = { ...h, revision: r.header.revision };
        const ours = enc.encode(hh, r);
        expect(watch.responseDeserialize(ours)).toEqual(watch.responseDeserialize(viaProtobufjs(hh, r)));
      }),
      { numRuns: 500 },
    );
  });

  it('encodes an events-only response byte for byte as the general path does', () => {
    const enc = new WatchResponseEncoder();
    fc.assert(
      fc.property(header, response, (h, r) => {
        const plain: WatchResponse = { ...r, created: false, canceled: false, compactRevision: 0, cancelReason: '', fragment: false };
        const hh = { ...h, revision: r.header.revision };
        expect(enc.encodeEvents(hh, r.watchId, r.events).equals(enc.encode(hh, plain))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('writes an events-only response in place, at any offset, with the same bytes as encodeEvents', () => {
    const enc = new WatchResponseEncoder();
    const watchId = fc.integer({ min: 0, max: 2 ** 40 });
    fc.assert(
      fc.property(header, watchId, fc.array(event, { maxLength: 4 }), fc.nat(40), (h, id, events, at) => {
        const want = enc.encodeEvents(h, id, events);
        const m = enc.prepareEvents(h, id, events);
        expect(m.length).toBe(want.length);
        const buf = Buffer.alloc(at + m.length + 3, 0xee);
        m.writeTo(buf, at);
        expect(buf.subarray(at, at + m.length).equals(want)).toBe(true);
        // Nothing written outside its own bytes.
        expect(buf.subarray(0, at).every((x) => x === 0xee) && buf.subarray(at + m.length).every((x) => x === 0xee)).toBe(true);
        expect(materialize(enc.prepareEvents(h, id, events)).equals(want)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('encodes a revision of many events in slices with the same bytes as encodeEvents', async () => {
    const enc = new WatchResponseEncoder();
    const h: Header = { clusterId: '1', memberId: '2', revision: 9, raftTerm: 3 };
    const events: KvEvent[] = Array.from({ length: 20_000 }, (_, i) => ({ type: 'DELETE', kv: { key: Buffer.from(`k${i}`), createRevision: 0, modRevision: 9, version: 0, value: Buffer.alloc(0), lease: '0' } }));
    expect((await enc.encodeEventsSliced(h, 4, events)).equals(enc.encodeEvents(h, 4, events))).toBe(true);
    await fc.assert(
      fc.asyncProperty(header, fc.integer({ min: 0, max: 2 ** 40 }), fc.array(event, { maxLength: 4 }), async (hh, id, evs) => {
        expect((await enc.encodeEventsSliced(hh, id, evs)).equals(enc.encodeEvents(hh, id, evs))).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  it('reuses one event encoding across watchers and keeps headers apart by revision and term', () => {
    const enc = new WatchResponseEncoder();
    const ev: KvEvent = { type: 'PUT', kv: { key: Buffer.from('a'), createRevision: 5, modRevision: 7, version: 2, value: Buffer.from('v'), lease: '0' } };
    const h: Header = { clusterId: '1', memberId: '2', revision: 7, raftTerm: 3 };
    const base = { header: { revision: 7 }, created: false, canceled: false, compactRevision: 0, cancelReason: '', fragment: false, events: [ev] };
    const a = watch.responseDeserialize(enc.encode(h, { ...base, watchId: 1 })) as { watchId: string; header: { raftTerm: string } };
    const b = watch.responseDeserialize(enc.encode(h, { ...base, watchId: 2 })) as { watchId: string };
    const c = watch.responseDeserialize(enc.encode({ ...h, raftTerm: 4 }, { ...base, watchId: 3 })) as { header: { raftTerm: string } };
    expect([a.watchId, b.watchId]).toEqual(['1', '2']);
    expect([a.header.raftTerm, c.header.raftTerm]).toEqual(['3', '4']);
  });
});

describe('encodeHeaderField', () => {
  it('is a PutResponse with only its header, as protobufjs encodes it, across cluster and member changes', () => {
    fc.assert(
      fc.property(fc.array(header, { minLength: 1, maxLength: 4 }), (hs) => {
        for (const h of hs) {
          const ours = encodeHeaderField(h);
          expect(put.responseDeserialize(ours)).toEqual(put.responseDeserialize(put.responseSerialize({ header: wireHeader(h, h.revision) })));
        }
      }),
      { numRuns: 300 },
    );
  });
});
