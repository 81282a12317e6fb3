// Response sizes against a real protobuf encoding of etcd's WatchResponse, and the fragmenting rules of
// etcd's sendFragments.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import protobuf from 'protobufjs';
import type { KeyValue, KvEvent } from '../../src/kv/types.js';
import type { WatchResponse } from '../../src/watch/types.js';
import { fragmentResponse, responseSize } from '../../src/watch/fragment.js';

// etcd's messages, field numbers as in rpc.proto / kv.proto.
const root = protobuf.Root.fromJSON({
  nested: {
    KeyValue: {
      fields: {
        key: { type: 'bytes', id: 1 },
        create_revision: { type: 'int64', id: 2 },
        mod_revision: { type: 'int64', id: 3 },
        version: { type: 'int64', id: 4 },
        value: { type: 'bytes', id: 5 },
        lease: { type: 'int64', id: 6 },
      },
    },
    Event: { fields: { type: { type: 'int32', id: 1 }, kv: { type: 'KeyValue', id: 2 }, prev_kv: { type: 'KeyValue', id: 3 } } },
    ResponseHeader: { fields: { revision: { type: 'int64', id: 3 } } },
    WatchResponse: {
      fields: {
        header: { type: 'ResponseHeader', id: 1 },
        watch_id: { type: 'int64', id: 2 },
        created: { type: 'bool', id: 3 },
        canceled: { type: 'bool', id: 4 },
        compact_revision: { type: 'int64', id: 5 },
        cancel_reason: { type: 'string', id: 6 },
        fragment: { type: 'bool', id: 7 },
        events: { rule: 'repeated', type: 'Event', id: 11 },
      },
    },
  },
});
const WatchResponseType = root.lookupType('WatchResponse');

/** A plain object with proto3's rule applied by hand: default values are left out. */
function nonDefault(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === 0 || v === false || v === '' || v === undefined) continue;
    if (v instanceof Uint8Array && v.length === 0) continue;
    out[k] = v;
  }
  return out;
}

function kvProto(kv: KeyValue): Record<string, unknown> {
  return nonDefault({
    key: kv.key,
    create_revision: kv.createRevision,
    mod_revision: kv.modRevision,
    version: kv.version,
    value: kv.value,
    lease: kv.lease === '0' ? 0 : kv.lease,
  });
}

function encodedSize(r: WatchResponse): number {
  const msg = {
    header: nonDefault({ revision: r.header.revision }),
    ...nonDefault({
      watch_id: r.watchId,
      created: r.created,
      canceled: r.canceled,
      compact_revision: r.compactRevision,
      cancel_reason: r.cancelReason,
      fragment: r.fragment,
    }),
    events: r.events.map((e) => ({
      ...(e.type === 'DELETE' ? { type: 1 } : {}),
      kv: kvProto(e.kv),
      ...(e.prevKv ? { prev_kv: kvProto(e.prevKv) } : {}),
    })),
  };
  return WatchResponseType.encode(msg).finish().length;
}

/** Our size counts 33 bytes for the header fields the gRPC layer adds (cluster, member, term). */
const ALLOWANCE = 33;

const arbKv = fc.record({
  key: fc.uint8Array({ minLength: 1, maxLength: 300 }),
  createRevision: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER })),
  modRevision: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  version: fc.nat(),
  value: fc.uint8Array({ maxLength: 400 }),
  lease: fc.oneof(fc.constant('0'), fc.bigInt({ min: 1n, max: (1n << 63n) - 1n }).map(String)),
});
const arbEvent: fc.Arbitrary<KvEvent> = fc
  .tuple(fc.constantFrom('PUT' as const, 'DELETE' as const), arbKv, fc.option(arbKv, { nil: undefined }))
  .map(([type, kv, prevKv]) => (prevKv ? { type, kv, prevKv } : { type, kv }));
const arbResponse: fc.Arbitrary<WatchResponse> = fc.record({
  header: fc.record({ revision: fc.nat() }),
  watchId: fc.integer({ min: -1, max: 1_000_000 }),
  created: fc.boolean(),
  canceled: fc.boolean(),
  compactRevision: fc.nat(),
  cancelReason: fc.string(),
  fragment: fc.boolean(),
  events: fc.array(arbEvent, { maxLength: 8 }),
});

function event(key: string, valueBytes: number, rev: number): KvEvent {
  return {
    type: 'PUT',
    kv: { key: Buffer.from(key), createRevision: rev, modRevision: rev, version: 1, value: Buffer.alloc(valueBytes, 120), lease: '0' },
  };
}

function resp(events: KvEvent[]): WatchResponse {
  return { header: { revision: 9 }, watchId: 3, created: false, canceled: false, compactRevision: 0, cancelReason: '', fragment: false, events };
}

describe('responseSize', () => {
  it('is the protobuf encoding size (plus the header allowance)', () => {
    fc.assert(
      fc.property(arbResponse, (r) => {
        expect(responseSize(r)).toBe(encodedSize(r) + ALLOWANCE);
      }),
      { numRuns: 300 },
    );
  });
});

describe('fragmentResponse', () => {
  it('leaves a small response, or a single huge event, whole', () => {
    const small = resp([event('a', 10, 5), event('b', 10, 5)]);
    expect(fragmentResponse(small, 10_000)).toEqual([small]);
    const huge = resp([event('a', 50_000, 5)]);
    expect(fragmentResponse(huge, 10_000)).toEqual([huge]);
  });

  it('splits in order; every part but the last says fragment; each part fits unless it holds one event', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 3000 }), { minLength: 2, maxLength: 60 }), fc.integer({ min: 200, max: 8000 }), (sizes, limit) => {
        const r = resp(sizes.map((n, i) => event(`k${i}`, n, 7)));
        const parts = fragmentResponse(r, limit);
        expect(parts.flatMap((p) => p.events)).toEqual(r.events);
        if (responseSize(r) < limit) {
          expect(parts).toEqual([r]);
          return;
        }
        parts.forEach((p, i) => {
          expect(p.fragment).toBe(i < parts.length - 1);
          expect(p.events.length).toBeGreaterThan(0);
          if (p.events.length > 1) expect(responseSize(p)).toBeLessThan(limit);
          expect({ ...p, events: [], fragment: false }).toEqual({ ...r, events: [] });
        });
        // Greedy: no part could have taken the next part's first event.
        for (let i = 0; i + 1 < parts.length; i++) {
          const p = parts[i] as WatchResponse;
          const grown = { ...p, events: [...p.events, (parts[i + 1] as WatchResponse).events[0] as KvEvent] };
          expect(responseSize(grown)).toBeGreaterThanOrEqual(limit);
        }
      }),
      { numRuns: 300 },
    );
  });
});
