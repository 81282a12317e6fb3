// Model-based test: fast-check generates sequences of puts, deletes, txns, compactions, ranges at random
// revisions and restarts; KvStore (on a real classic-level directory) must agree with ReferenceModel.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KvStore } from '../../src/kv/kv-store.js';
import { EtcdError } from '../../src/kv/errors.js';
import type { KvEvent } from '../../src/kv/types.js';
import { ReferenceModel, type ModelKv } from './reference-model.js';

const enc = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const dec = (b: Uint8Array): string => Buffer.from(b).toString('latin1');

const keyArb = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f');
const valueArb = fc.string({ maxLength: 4 });

type Op =
  | { op: 'put'; key: string; value: string }
  | { op: 'del'; key: string; end?: string | undefined }
  | { op: 'txn'; key: string; version: number; then: string; other: string; value: string }
  | { op: 'compact'; back: number }
  | { op: 'range'; key: string; end?: string | undefined; back: number; limit: number }
  | { op: 'restart' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('put' as const), key: keyArb, value: valueArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('del' as const), key: keyArb, end: fc.option(fc.constantFrom('c', 'e', 'z', '\0'), { nil: undefined }) }, { requiredKeys: ['op', 'key'] }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('txn' as const), key: keyArb, version: fc.integer({ min: 0, max: 3 }), then: keyArb, other: keyArb, value: valueArb }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('compact' as const), back: fc.integer({ min: 0, max: 6 }) }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('range' as const), key: keyArb, end: fc.option(fc.constantFrom('c', 'e', 'z', '\0'), { nil: undefined }), back: fc.integer({ min: -1, max: 8 }), limit: fc.integer({ min: 0, max: 3 }) }, { requiredKeys: ['op', 'key', 'back', 'limit'] }) },
  { weight: 1, arbitrary: fc.constant({ op: 'restart' as const }) },
);

function codeOf(e: unknown): string {
  if (e instanceof EtcdError) return e.code;
  if (e instanceof Error) return e.message;
  return String(e);
}

function simple(kv: { key: Uint8Array; value: Uint8Array; createRevision: number; modRevision: number; version: number }): ModelKv {
  return { key: dec(kv.key), value: dec(kv.value), createRevision: kv.createRevision, modRevision: kv.modRevision, version: kv.version };
}

describe('KvStore agrees with the reference model', () => {
  it('on random operation sequences, across restarts', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 60 }), async (ops) => {
        const dir = await mkdtemp(join(tmpdir(), 'setpoint-kv-model-'));
        let store = await KvStore.open(dir);
        const model = new ReferenceModel();
        const seen: { rev: number; type: string; key: string; value: string }[] = [];
        const listen = (s: KvStore): void => {
          s.onCommit((rev: number, evs: readonly KvEvent[]) => {
            for (const e of evs) seen.push({ rev, type: e.type, key: dec(e.kv.key), value: dec(e.kv.value) });
          });
        };
        listen(store);
        try {
          for (const o of ops) {
            switch (o.op) {
              case 'put': {
                const r = await store.put({ key: enc(o.key), value: enc(o.value) });
                model.write([{ put: o.key, value: o.value }]);
                expect(r.header.revision).toBe(model.rev);
                break;
              }
              case 'del': {
                const r = await store.deleteRange({ key: enc(o.key), ...(o.end !== undefined ? { rangeEnd: enc(o.end) } : {}) });
                const before = model.rev;
                model.write([o.end !== undefined ? { del: o.key, end: o.end } : { del: o.key }]);
                expect(r.deleted).toBe(model.rev > before ? model.range(o.key, o.end, before).length : 0);
                expect(r.header.revision).toBe(model.rev);
                break;
              }
              case 'txn': {
                const cur = model.range(o.key, undefined, 0)[0];
                const ok = (cur?.version ?? 0) === o.version;
                const r = await store.txn({
                  compare: [{ key: enc(o.key), target: 'VERSION', result: 'EQUAL', version: o.version }],
                  success: [{ requestPut: { key: enc(o.then), value: enc(o.value) } }, { requestRange: { key: enc('a'), rangeEnd: enc('z') } }],
                  failure: [{ requestDeleteRange: { key: enc(o.other) } }],
                });
                expect(r.succeeded).toBe(ok);
                model.write([ok ? { put: o.then, value: o.value } : { del: o.other }]);
                expect(r.header.revision).toBe(model.rev);
                if (ok) {
                  const rr = r.responses[1];
                  if (!rr || !('responseRange' in rr)) throw new Error('missing range response');
                  // The range inside the txn sees the txn's own put.
                  expect(rr.responseRange.kvs.map(simple)).toEqual(model.range('a', 'z', 0));
                }
                break;
              }
              case 'compact': {
                const rev = Math.max(1, model.rev - o.back);
                let want = 'ok';
                try {
                  model.compact(rev);
                } catch (e) {
                  want = codeOf(e);
                }
                let got = 'ok';
                try {
                  await store.compact(rev).done;
                } catch (e) {
                  got = codeOf(e);
                }
                expect(got).toBe(want);
                break;
              }
              case 'range': {
                const rev = o.back < 0 ? 0 : Math.max(1, model.rev - o.back);
                let want: ModelKv[] | string;
                try {
                  want = model.range(o.key, o.end, rev);
                } catch (e) {
                  want = codeOf(e);
                }
                try {
                  const r = await store.range({ key: enc(o.key), ...(o.end !== undefined ? { rangeEnd: enc(o.end) } : {}), revision: rev, limit: o.limit });
                  expect(typeof want).not.toBe('string');
                  const all = want as ModelKv[];
                  expect(r.count).toBe(all.length);
                  expect(r.kvs.map(simple)).toEqual(o.limit > 0 ? all.slice(0, o.limit) : all);
                  expect(r.more).toBe(o.limit > 0 && all.length > o.limit);
                  expect(r.header.revision).toBe(model.rev);
                } catch (e) {
                  if (e instanceof EtcdError) expect(e.code).toBe(want);
                  else throw e;
                }
                break;
              }
              case 'restart': {
                // The bytes in use as counted along the way (compaction included) are what a reopen counts.
                const size = store.size();
                await store.close();
                store = await KvStore.open(dir);
                listen(store);
                expect(store.currentRev).toBe(model.rev);
                expect(store.size()).toBe(size);
                break;
              }
            }
          }
          // The events every commit produced are exactly the model's history, revision by revision.
          const byRev = new Map<number, { type: string; key: string; value: string }[]>();
          for (const e of seen) byRev.set(e.rev, [...(byRev.get(e.rev) ?? []), { type: e.type, key: e.key, value: e.value }]);
          for (let r = 2; r <= model.rev; r++) {
            const got = (byRev.get(r) ?? []).slice().sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
            expect(got).toEqual(model.events(r));
          }
          // And the history kept on disk replays the same events above the compacted revision.
          const from = Math.max(2, model.compactRev + 1);
          const hist = new Map<number, { type: string; key: string; value: string }[]>();
          for await (const { rev, event } of store.history(from, model.rev)) {
            hist.set(rev, [...(hist.get(rev) ?? []), { type: event.type, key: dec(event.kv.key), value: dec(event.kv.value) }]);
          }
          for (let r = from; r <= model.rev; r++) {
            const got = (hist.get(r) ?? []).slice().sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
            expect(got).toEqual(model.events(r));
          }
        } finally {
          await store.close();
          await rm(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 60, seed: 20261129 },
    );
  });
});
