// Property: whatever the interleaving of writes, watch creations from any revision, slow sinks draining at
// random and cancels, every watcher ends up having received exactly the store's history filtered to its
// range and filters, from its start revision, each revision whole and in order, with the right prev_kv.
// fast-check prints the seed and the shrunk command list on failure.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { KvStore } from '../../src/kv/kv-store.js';
import type { KeyValue, KvEvent, RequestOp } from '../../src/kv/types.js';
import { inRange, keyRange, toKey } from '../../src/kv/key-range.js';
import type { WatchFilter, WatcherResponse } from '../../src/watch/types.js';
import type { WatcherHandle } from '../../src/watch/watcher.js';
import { TestSink, dec, enc, waitFor, withWatchable } from './helpers.js';

const KEYS = ['k0', 'k1', 'k2', 'k3', 'k4', 'z'];

type Write = { put: string; value: number } | { del: string; end?: string } | { txn: string[]; value: number };

interface WatchSpec {
  readonly key: string;
  readonly end?: string;
  /** 'now' = start revision 0; a negative offset reaches back from the head, a positive one ahead. */
  readonly start: 'now' | number;
  readonly prevKv: boolean;
  readonly filters: WatchFilter[];
  /** Responses the sink holds before refusing (Infinity: always drains). */
  readonly capacity: number;
}

type Cmd = { write: Write } | { watch: WatchSpec } | { drain: number } | { cancel: number } | { compact: number } | { yield: true };

const arbKey = fc.constantFrom(...KEYS);
const arbWrite: fc.Arbitrary<Write> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ put: arbKey, value: fc.nat(99) }) },
  { weight: 2, arbitrary: arbKey.map((del) => ({ del })) },
  { weight: 1, arbitrary: fc.constant({ del: 'k1', end: 'k4' }) },
  { weight: 2, arbitrary: fc.record({ txn: fc.uniqueArray(arbKey, { minLength: 2, maxLength: 4 }), value: fc.nat(99) }) },
);
const arbRange = fc.constantFrom<{ key: string; end?: string }>(
  { key: 'k2' },
  { key: 'z' },
  { key: 'k1', end: 'k4' },
  { key: 'k', end: 'l' },
  { key: 'k3', end: '\0' },
  { key: '\0', end: '\0' },
);
const arbWatch: fc.Arbitrary<WatchSpec> = fc
  .record({
    range: arbRange,
    start: fc.oneof(fc.constant<'now'>('now'), fc.integer({ min: -40, max: 3 })),
    prevKv: fc.boolean(),
    filters: fc.subarray<WatchFilter>(['NOPUT', 'NODELETE'], { maxLength: 1 }),
    capacity: fc.oneof(fc.constant(Infinity), fc.integer({ min: 1, max: 3 })),
  })
  .map(({ range, ...rest }) => ({ ...range, ...rest }));
const arbCmd: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 10, arbitrary: arbWrite.map((write) => ({ write })) },
  { weight: 3, arbitrary: arbWatch.map((watch) => ({ watch })) },
  { weight: 3, arbitrary: fc.nat().map((drain) => ({ drain })) },
  { weight: 1, arbitrary: fc.nat().map((cancel) => ({ cancel })) },
  { weight: 3, arbitrary: fc.constant({ yield: true as const }) },
);

async function write(kv: KvStore, w: Write): Promise<void> {
  if ('put' in w) {
    await kv.put({ key: enc(w.put), value: enc(`${w.value}`) });
  } else if ('del' in w) {
    await kv.deleteRange({ key: enc(w.del), ...(w.end ? { rangeEnd: enc(w.end) } : {}) });
  } else {
    const ops: RequestOp[] = w.txn.map((k) => ({ requestPut: { key: enc(k), value: enc(`${w.value}`) } }));
    await kv.txn({ success: ops });
  }
}

const rangeEnd = (end: string | undefined): Uint8Array | undefined => (end === undefined ? undefined : end === '\0' ? Uint8Array.of(0) : enc(end));

interface Live {
  readonly spec: WatchSpec;
  readonly sink: TestSink;
  readonly handle: WatcherHandle;
  /** First revision it must see. */
  readonly from: number;
  canceled: boolean;
}

/** "TYPE key@rev=value prev=value@rev|-" */
function describeEvent(e: KvEvent, withPrev: boolean): string {
  const base = `${e.type} ${dec(e.kv.key)}@${e.kv.modRevision}${e.type === 'PUT' ? `=${dec(e.kv.value)}` : ''}`;
  if (!withPrev) return base + (e.prevKv ? ' UNEXPECTED prev' : '');
  return `${base} prev=${e.prevKv ? `${dec(e.prevKv.value)}@${e.prevKv.modRevision}` : '-'}`;
}

/** Revisions ascend within a response and across responses, and no revision is split between two. */
function checkResponses(rs: readonly WatcherResponse[]): void {
  let last = 0;
  for (const r of rs) {
    const revs = r.events.map((e) => e.kv.modRevision);
    if (revs.length === 0) continue;
    expect(revs[0]).toBeGreaterThan(last);
    for (let i = 1; i < revs.length; i++) expect(revs[i]).toBeGreaterThanOrEqual(revs[i - 1] as number);
    expect(revs.at(-1)).toBeLessThanOrEqual(r.revision);
    last = revs.at(-1) as number;
  }
}

interface Committed {
  readonly rev: number;
  readonly event: KvEvent;
  /** The key's value just before this revision, replayed from the commits. */
  readonly prev: KeyValue | undefined;
}

/**
 * Plays the commands against a store and a watchable store, waits until every watcher is caught up, and
 * checks each one against what was committed. With compaction, a watcher may instead end compacted: then
 * what it got must be a prefix of its stream, followed by the notice. Two etcd rules loosen the
 * comparison at compacted revisions: compact(C) removes a tombstone at exactly C (so a watch reading C from
 * history does not see that DELETE), and prev_kv for an event at R <= C reads below C, which is gone.
 */
async function runScenario(cmds: readonly Cmd[], batchMaxRevs: number, maxWatchersPerSync: number): Promise<void> {
  await withWatchable(
    async ({ kv, ws }) => {
      const commits: Committed[] = [];
      const state = new Map<string, KeyValue>();
      kv.onCommit((rev, events) => {
        for (const e of events) {
          const k = toKey(e.kv.key);
          commits.push({ rev, event: { type: e.type, kv: e.kv }, prev: state.get(k) });
          if (e.type === 'PUT') state.set(k, e.kv);
          else state.delete(k);
        }
      });
      const compactions = new Set<number>();
      const watchers: Live[] = [];
      for (const c of cmds) {
        if ('write' in c) {
          await write(kv, c.write);
        } else if ('watch' in c) {
          const s = c.watch;
          const head = kv.currentRev;
          const startRevision = s.start === 'now' ? 0 : Math.max(1, head + s.start);
          const sink = new TestSink(s.capacity, s.capacity === Infinity);
          const end = rangeEnd(s.end);
          const handle = ws.watch({ key: enc(s.key), ...(end ? { rangeEnd: end } : {}), startRevision, prevKv: s.prevKv, filters: s.filters }, sink);
          watchers.push({ spec: s, sink, handle, from: startRevision === 0 ? head + 1 : startRevision, canceled: false });
        } else if ('drain' in c) {
          if (watchers.length > 0) watchers[c.drain % watchers.length]?.sink.drain();
          ws.kick();
        } else if ('cancel' in c) {
          const w = watchers[c.cancel % Math.max(1, watchers.length)];
          if (w) {
            w.handle.cancel();
            w.canceled = true;
          }
        } else if ('compact' in c) {
          if (kv.currentRev > kv.compactRev) {
            const rev = kv.compactRev + 1 + Math.floor(c.compact * (kv.currentRev - kv.compactRev));
            // Not awaited: physical removal races with the watchers' history reads on purpose.
            void kv.compact(rev).done;
            compactions.add(rev);
          }
        } else {
          await new Promise((r) => setImmediate(r));
        }
      }
      await waitFor(() => {
        for (const w of watchers) w.sink.drain();
        ws.kick();
        return watchers.every((w) => w.canceled || (['synced', 'compacted'].includes(w.handle.state) && w.sink.held.length === 0));
      }, 'every watcher caught up');
      await kv.compacted();

      if (compactions.size === 0) {
        // The commits are the store's history.
        const history: string[] = [];
        for await (const { event } of kv.history(1, kv.currentRev)) history.push(describeEvent(event, false));
        expect(history).toEqual(commits.map((c) => describeEvent(c.event, false)));
      }
      const compactRev = kv.compactRev;
      const lostTombstone = (e: KvEvent): boolean => e.type === 'DELETE' && compactions.has(e.kv.modRevision);
      const show = (e: KvEvent, withPrev: boolean): string =>
        describeEvent(withPrev && e.kv.modRevision <= compactRev ? { type: e.type, kv: e.kv } : e, withPrev && e.kv.modRevision > compactRev);
      for (const w of watchers) {
        const r = keyRange(enc(w.spec.key), rangeEnd(w.spec.end));
        const expected = commits
          .filter((c) => c.rev >= w.from && inRange(r, toKey(c.event.kv.key)))
          .filter((c) => (c.event.type === 'PUT' ? !w.spec.filters.includes('NOPUT') : !w.spec.filters.includes('NODELETE')))
          .map((c) => (c.prev && w.spec.prevKv ? { ...c.event, prevKv: c.prev } : c.event))
          .filter((e) => !lostTombstone(e))
          .map((e) => show(e, w.spec.prevKv));
        const events = w.sink.events();
        if (!w.spec.prevKv) expect(events.filter((e) => e.prevKv)).toEqual([]);
        const got = events.filter((e) => !lostTombstone(e)).map((e) => show(e, w.spec.prevKv));
        const notices = w.sink.received.filter((x) => x.compactRevision > 0);
        if (w.canceled || w.handle.state === 'compacted') {
          expect(got).toEqual(expected.slice(0, got.length));
        } else {
          expect(got).toEqual(expected);
        }
        if (w.handle.state === 'compacted') {
          expect(notices).toHaveLength(1);
          expect(w.sink.received.at(-1)).toBe(notices[0]);
          // It was told about a compaction above everything it received.
          expect(notices[0]?.compactRevision).toBeGreaterThan(events.at(-1)?.kv.modRevision ?? 0);
        } else {
          expect(notices).toEqual([]);
        }
        checkResponses(w.sink.received);
      }
    },
    { batchMaxRevs, maxWatchersPerSync, victimRetryMs: 1, syncIntervalMs: 5 },
  );
}

const arbBatch = fc.oneof(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 7, max: 60 }));

describe('watch property', () => {
  it('every watcher receives exactly the store\'s history, filtered, from its start revision', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(arbCmd, { minLength: 1, maxLength: 80, size: 'max' }), arbBatch, fc.integer({ min: 1, max: 3 }), runScenario),
      { numRuns: 150 },
    );
  });

  it('with compactions racing the catch-up, a watcher gets its whole stream or a prefix and a compaction notice', async () => {
    const withCompactions = fc.oneof({ weight: 12, arbitrary: arbCmd }, { weight: 1, arbitrary: fc.double({ min: 0, max: 0.999, noNaN: true }).map((compact) => ({ compact })) });
    await fc.assert(
      fc.asyncProperty(fc.array(withCompactions, { minLength: 1, maxLength: 80, size: 'max' }), arbBatch, fc.integer({ min: 1, max: 3 }), runScenario),
      { numRuns: 150 },
    );
  });
});
