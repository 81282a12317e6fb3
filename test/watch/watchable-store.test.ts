// The watchable store against a real KvStore: start revisions, ranges, filters, prev_kv, catch-up from
// history in batches of whole revisions, fan-out to many watchers, slow watchers and compaction.
import { describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KvStore } from '../../src/kv/kv-store.js';
import { prefixEnd } from '../../src/kv/key-range.js';
import { TestSink, dec, enc, historySummary, summarize, waitFor, withWatchable } from './helpers.js';

const put = (kv: KvStore, k: string, v: string) => kv.put({ key: enc(k), value: enc(v) });
const del = (kv: KvStore, k: string, end?: string) => kv.deleteRange({ key: enc(k), ...(end ? { rangeEnd: enc(end) } : {}) });

describe('WatchableStore: start revision', () => {
  it('0 means the next revision: nothing from before, everything after', async () => {
    await withWatchable(async ({ kv, ws }) => {
      await put(kv, 'a', '1'); // rev 2
      const sink = new TestSink();
      const w = ws.watch({ key: enc('a'), startRevision: 0 }, sink);
      expect(w.state).toBe('synced');
      await put(kv, 'a', '2'); // rev 3
      expect(sink.summary()).toEqual(['PUT a@3=2']);
      expect(sink.received[0]?.revision).toBe(3);
    });
  });

  it('is inclusive: a watch from revision r gets the event at r', async () => {
    await withWatchable(async ({ kv, ws }) => {
      await put(kv, 'a', '1'); // 2
      await put(kv, 'a', '2'); // 3
      await put(kv, 'a', '3'); // 4
      const sink = new TestSink();
      const w = ws.watch({ key: enc('a'), startRevision: 3 }, sink);
      expect(w.state).toBe('unsynced');
      await waitFor(() => w.state === 'synced', 'watcher synced');
      expect(sink.summary()).toEqual(['PUT a@3=2', 'PUT a@4=3']);
      await put(kv, 'a', '4');
      expect(sink.summary()).toEqual(['PUT a@3=2', 'PUT a@4=3', 'PUT a@5=4']);
      expect(sink.syncedCount).toBe(1);
    });
  });

  it('a future start revision waits for it', async () => {
    await withWatchable(async ({ kv, ws }) => {
      const sink = new TestSink();
      const w = ws.watch({ key: enc('a'), startRevision: 4 }, sink);
      expect(w.state).toBe('synced');
      await put(kv, 'a', '1'); // 2
      await put(kv, 'a', '2'); // 3
      await put(kv, 'a', '3'); // 4
      expect(sink.summary()).toEqual(['PUT a@4=3']);
    });
  });

  it('start revision 1 on an empty store, then history from the first write', async () => {
    await withWatchable(async ({ kv, ws }) => {
      await put(kv, 'x', '1');
      const sink = new TestSink();
      const w = ws.watch({ key: enc('x'), startRevision: 1 }, sink);
      await waitFor(() => w.state === 'synced', 'synced');
      expect(sink.summary()).toEqual(['PUT x@2=1']);
    });
  });
});

describe('WatchableStore: ranges and filters', () => {
  it('single key, range, prefix, from-key and all keys see exactly their keys', async () => {
    await withWatchable(async ({ kv, ws }) => {
      const single = new TestSink();
      const range = new TestSink();
      const prefix = new TestSink();
      const fromKey = new TestSink();
      const all = new TestSink();
      ws.watch({ key: enc('b'), startRevision: 0 }, single);
      ws.watch({ key: enc('b'), rangeEnd: enc('d'), startRevision: 0 }, range);
      ws.watch({ key: enc('b'), rangeEnd: prefixEnd(enc('b')), startRevision: 0 }, prefix);
      ws.watch({ key: enc('c'), rangeEnd: Uint8Array.of(0), startRevision: 0 }, fromKey);
      ws.watch({ key: Uint8Array.of(0), rangeEnd: Uint8Array.of(0), startRevision: 0 }, all);
      for (const k of ['a', 'b', 'b1', 'c', 'd', 'z']) await put(kv, k, 'v');
      const keys = (s: TestSink) => s.events().map((e) => dec(e.kv.key));
      expect(keys(single)).toEqual(['b']);
      expect(keys(range)).toEqual(['b', 'b1', 'c']);
      expect(keys(prefix)).toEqual(['b', 'b1']);
      expect(keys(fromKey)).toEqual(['c', 'd', 'z']);
      expect(keys(all)).toEqual(['a', 'b', 'b1', 'c', 'd', 'z']);
    });
  });

  it('a multi-key txn reaches each watcher as one response per revision, in txn order', async () => {
    await withWatchable(async ({ kv, ws }) => {
      await put(kv, 'p/old', 'x');
      const sink = new TestSink();
      ws.watch({ key: enc('p/'), rangeEnd: prefixEnd(enc('p/')), startRevision: 0 }, sink);
      await kv.txn({
        success: [
          { requestPut: { key: enc('p/2'), value: enc('b') } },
          { requestPut: { key: enc('q'), value: enc('not mine') } },
          { requestPut: { key: enc('p/1'), value: enc('a') } },
          { requestDeleteRange: { key: enc('p/old') } },
        ],
      });
      expect(sink.received).toHaveLength(1);
      expect(sink.summary()).toEqual(['PUT p/2@3=b', 'PUT p/1@3=a', 'DELETE p/old@3']);
    });
  });

  it('NOPUT and NODELETE drop those events live and in history; all filtered means no response', async () => {
    await withWatchable(async ({ kv, ws }) => {
      await put(kv, 'k', '1'); // 2
      await del(kv, 'k'); // 3
      const histNoPut = new TestSink();
      const histNoDel = new TestSink();
      const h1 = ws.watch({ key: enc('k'), startRevision: 2, filters: ['NOPUT'] }, histNoPut);
      const h2 = ws.watch({ key: enc('k'), startRevision: 2, filters: ['NODELETE'] }, histNoDel);
      await waitFor(() => h1.state === 'synced' && h2.state === 'synced', 'synced');
      const liveNoPut = new TestSink();
      const liveNoDel = new TestSink();
      ws.watch({ key: enc('k'), startRevision: 0, filters: ['NOPUT'] }, liveNoPut);
      ws.watch({ key: enc('k'), startRevision: 0, filters: ['NODELETE'] }, liveNoDel);
      await put(kv, 'k', '2'); // 4
      await del(kv, 'k'); // 5
      expect(histNoPut.summary()).toEqual(['DELETE k@3', 'DELETE k@5']);
      expect(histNoDel.summary()).toEqual(['PUT k@2=1', 'PUT k@4=2']);
      expect(liveNoPut.summary()).toEqual(['DELETE k@5']);
      expect(liveNoPut.received).toHaveLength(1);
      expect(liveNoDel.summary()).toEqual(['PUT k@4=2']);
    });
  });
});

describe('WatchableStore: prev_kv', () => {
  it('live events carry the previous value only when asked', async () => {
    await withWatchable(async ({ kv, ws }) => {
      await put(kv, 'k', 'old');
      const withPrev = new TestSink();
      const without = new TestSink();
      ws.watch({ key: enc('k'), startRevision: 0, prevKv: true }, withPrev);
      ws.watch({ key: enc('k'), startRevision: 0 }, without);
      await put(kv, 'k', 'new');
      await del(kv, 'k');
      await put(kv, 'k', 'again');
      const prevs = withPrev.events().map((e) => (e.prevKv ? `${dec(e.prevKv.value)}@${e.prevKv.modRevision}` : '-'));
      expect(prevs).toEqual(['old@2', 'new@3', '-']);
      expect(without.events().every((e) => e.prevKv === undefined)).toBe(true);
    });
  });

  it('history events get the key as it was at mod_revision - 1', async () => {
    await withWatchable(async ({ kv, ws }) => {
      await put(kv, 'k', 'v1'); // 2
      await put(kv, 'other', 'x'); // 3
      await put(kv, 'k', 'v2'); // 4
      await del(kv, 'k'); // 5
      await put(kv, 'k', 'v3'); // 6
      const sink = new TestSink();
      const w = ws.watch({ key: enc('k'), startRevision: 2, prevKv: true }, sink);
      await waitFor(() => w.state === 'synced', 'synced');
      const prevs = sink.events().map((e) => `${summarize(e)} prev=${e.prevKv ? `${dec(e.prevKv.value)}@${e.prevKv.modRevision}/v${e.prevKv.version}` : '-'}`);
      expect(prevs).toEqual(['PUT k@2=v1 prev=-', 'PUT k@4=v2 prev=v1@2/v1', 'DELETE k@5 prev=v2@4/v2', 'PUT k@6=v3 prev=-']);
      const plain = new TestSink();
      const w2 = ws.watch({ key: enc('k'), startRevision: 2 }, plain);
      await waitFor(() => w2.state === 'synced', 'synced');
      expect(plain.events().every((e) => e.prevKv === undefined)).toBe(true);
    });
  });
});

describe('WatchableStore: catch-up from history', () => {
  it('2500 revisions arrive in batches of at most 1000 revisions, no revision split, no gap, no duplicate', async () => {
    await withWatchable(async ({ kv, ws }) => {
      // Every third revision is a two-key txn, so a split revision would show.
      for (let i = 0; i < 2500; i++) {
        if (i % 3 === 0) {
          await kv.txn({
            success: [
              { requestPut: { key: enc(`w/${i % 7}`), value: enc(`${i}a`) } },
              { requestPut: { key: enc(`w/x${i % 5}`), value: enc(`${i}b`) } },
            ],
          });
        } else {
          await put(kv, `w/${i % 11}`, `${i}`);
        }
      }
      expect(kv.currentRev).toBe(2501);
      const sink = new TestSink();
      const w = ws.watch({ key: enc('w/'), rangeEnd: prefixEnd(enc('w/')), startRevision: 2 }, sink);
      await waitFor(() => w.state === 'synced', 'synced');
      expect(sink.summary()).toEqual(await historySummary(kv, 2, 2501));
      expect(sink.received.length).toBeGreaterThanOrEqual(3);
      const seenIn = new Map<number, number>();
      sink.received.forEach((r, i) => {
        const revs = new Set(r.events.map((e) => e.kv.modRevision));
        expect(revs.size).toBeLessThanOrEqual(1000);
        // The header revision covers every event in the response.
        expect(Math.max(...revs)).toBeLessThanOrEqual(r.revision);
        for (const rev of revs) {
          expect(seenIn.get(rev), `revision ${rev} split across responses`).toBeUndefined();
          seenIn.set(rev, i);
        }
      });
      expect(seenIn.size).toBe(2500);
      // And then live.
      await put(kv, 'w/live', 'yes');
      expect(sink.summary().at(-1)).toBe('PUT w/live@2502=yes');
    });
  });

  it('watchers at different revisions catch up together, each from its own start', async () => {
    await withWatchable(
      async ({ kv, ws }) => {
        for (let i = 0; i < 300; i++) await put(kv, `k${i % 4}`, `${i}`);
        const starts = [2, 50, 51, 150, 299, 301];
        const sinks = starts.map(() => new TestSink());
        const ws_ = starts.map((s, i) => ws.watch({ key: enc('k'), rangeEnd: enc('l'), startRevision: s }, sinks[i] as TestSink));
        // Writes keep coming while they catch up.
        const writing = (async () => {
          for (let i = 0; i < 100; i++) await put(kv, `k${i % 3}`, `late${i}`);
        })();
        await writing;
        await waitFor(() => ws_.every((w) => w.state === 'synced'), 'all synced');
        for (const [i, s] of starts.entries()) expect(sinks[i]?.summary()).toEqual(await historySummary(kv, s, kv.currentRev));
      },
      { batchMaxRevs: 64 },
    );
  });
});

describe('WatchableStore: catch-up under a steady writer', () => {
  it('a watcher far behind reaches the head while writes keep coming, and misses nothing', async () => {
    await withWatchable(async ({ kv, ws }) => {
      for (let i = 0; i < 3000; i++) await put(kv, `c${i % 13}`, `${i}`);
      const sink = new TestSink();
      const w = ws.watch({ key: enc('c'), rangeEnd: enc('d'), startRevision: 2 }, sink);
      let writes = 0;
      // Writes go on until the watcher has caught up (with a cap, so a watcher that never does fails).
      while (w.state !== 'synced' && writes < 100_000) {
        await put(kv, `c${writes % 13}`, `late${writes}`);
        writes++;
        if (writes % 20 === 0) await new Promise((r) => setImmediate(r));
      }
      expect(w.state).toBe('synced');
      expect(writes).toBeGreaterThan(0);
      for (let i = 0; i < 10; i++) await put(kv, `c${i}`, 'after');
      expect(sink.summary()).toEqual(await historySummary(kv, 2, kv.currentRev));
    });
  });
});

describe('WatchableStore: fan-out', () => {
  it('1000 watchers on one prefix, plus unrelated ones, each get every event of their range', async () => {
    await withWatchable(async ({ kv, ws }) => {
      const sinks = Array.from({ length: 1000 }, () => new TestSink());
      for (const s of sinks) ws.watch({ key: enc('/registry/'), rangeEnd: prefixEnd(enc('/registry/')), startRevision: 0 }, s);
      const others = Array.from({ length: 200 }, () => new TestSink());
      others.forEach((s, i) => ws.watch({ key: enc(`/other/${i}`), startRevision: 0 }, s));
      for (let i = 0; i < 50; i++) await put(kv, `/registry/pods/p${i}`, `${i}`);
      await put(kv, '/other/7', 'x');
      const expected = await historySummary(kv, 2, kv.currentRev, (k) => k.startsWith('/registry/'));
      expect(expected).toHaveLength(50);
      for (const s of sinks) expect(s.summary()).toEqual(expected);
      expect(others[7]?.summary()).toEqual(['PUT /other/7@52=x']);
      expect(others.filter((s) => s.received.length > 0)).toHaveLength(1);
      expect(ws.stats()).toEqual({ synced: 1200, unsynced: 0, victims: 0 });
    });
  });
});

describe('WatchableStore: slow watchers', () => {
  it('a sink that does not drain never blocks writes, and later catches up with every event in order', async () => {
    await withWatchable(async ({ kv, ws }) => {
      const slow = new TestSink(4, false);
      const fast = new TestSink();
      const w = ws.watch({ key: enc('s/'), rangeEnd: enc('s0'), startRevision: 0, prevKv: true }, slow);
      ws.watch({ key: enc('s/'), rangeEnd: enc('s0'), startRevision: 0 }, fast);
      // Every write completes although the slow sink holds at most four responses and nobody drains it.
      for (let i = 0; i < 500; i++) await put(kv, `s/${i % 10}`, `${i}`);
      expect(fast.received).toHaveLength(500);
      expect(slow.held).toHaveLength(4);
      expect(w.state).toBe('victim');
      // Drain in small steps, as a slow consumer would; it passes through victim and unsynced to synced.
      await waitFor(() => {
        slow.drain();
        ws.kick();
        return w.state === 'synced' && slow.held.length === 0;
      }, 'slow watcher caught up');
      const expected = await historySummary(kv, 2, kv.currentRev);
      expect(slow.summary()).toEqual(expected);
      // prev_kv survived the detour through history.
      const last = slow.events().at(-1);
      expect(dec(last?.prevKv?.value)).toBe('489');
      expect(ws.stats().victims).toBe(0);
    });
  });

  it('a victim that is retried while writes continue loses nothing', async () => {
    await withWatchable(async ({ kv, ws }) => {
      const slow = new TestSink(2, false);
      const w = ws.watch({ key: enc('a'), rangeEnd: enc('b'), startRevision: 0 }, slow);
      let writing = true;
      const writes = (async () => {
        for (let i = 0; i < 600; i++) {
          await put(kv, `a${i % 5}`, `${i}`);
          // Let the event loop (victim retries, sync rounds, the drainer) run between bursts.
          if (i % 10 === 9) await new Promise((r) => setImmediate(r));
        }
        writing = false;
      })();
      for (let tick = 0; writing; tick++) {
        if (tick % 3 === 0) slow.drain();
        await new Promise((r) => setImmediate(r));
      }
      await writes;
      expect(slow.refused).toBeGreaterThan(0);
      await waitFor(() => {
        slow.drain();
        return w.state === 'synced' && slow.held.length === 0;
      }, 'caught up');
      expect(slow.summary()).toEqual(await historySummary(kv, 2, kv.currentRev));
    });
  });
});

describe('WatchableStore: compaction', () => {
  it('a watch below the compacted revision is told compact_revision and dropped; at it, it works', async () => {
    await withWatchable(async ({ kv, ws }) => {
      for (let i = 0; i < 10; i++) await put(kv, 'k', `${i}`); // revs 2..11
      await kv.compact(6).done;
      const below = new TestSink();
      const at = new TestSink();
      const wb = ws.watch({ key: enc('k'), startRevision: 5 }, below);
      const wa = ws.watch({ key: enc('k'), startRevision: 6 }, at);
      await waitFor(() => wb.state === 'compacted' && wa.state === 'synced', 'compacted and synced');
      expect(below.received).toEqual([{ watchId: wb.id, revision: 0, events: [], compactRevision: 6 }]);
      expect(at.summary()).toEqual(['PUT k@6=4', 'PUT k@7=5', 'PUT k@8=6', 'PUT k@9=7', 'PUT k@10=8', 'PUT k@11=9']);
      await put(kv, 'k', 'after');
      expect(below.received).toHaveLength(1);
      expect(ws.stats()).toEqual({ synced: 1, unsynced: 0, victims: 0 });
    });
  });

  it('a victim left behind by a compaction is compacted when it comes back', async () => {
    await withWatchable(async ({ kv, ws }) => {
      const slow = new TestSink(1, false);
      const w = ws.watch({ key: enc('k'), startRevision: 0 }, slow);
      for (let i = 0; i < 20; i++) await put(kv, 'k', `${i}`);
      expect(w.state).toBe('victim');
      await kv.compact(15).done;
      await waitFor(() => {
        slow.drain();
        ws.kick();
        return w.state === 'compacted';
      }, 'compacted');
      expect(slow.received.at(-1)).toMatchObject({ compactRevision: 15, events: [] });
    });
  });

  it('a compaction with no watcher below it leaves catch-up alone', async () => {
    await withWatchable(async ({ kv, ws }) => {
      for (let i = 0; i < 20; i++) await put(kv, `k${i % 2}`, `${i}`);
      await kv.compact(10).done;
      const sink = new TestSink();
      const w = ws.watch({ key: enc('k'), rangeEnd: enc('l'), startRevision: 12 }, sink);
      await waitFor(() => w.state === 'synced', 'synced');
      expect(sink.summary()).toEqual(await historySummary(kv, 12, 21));
    });
  });
});

describe('WatchableStore: cancel and progress', () => {
  it('a canceled watcher gets nothing more, wherever it was', async () => {
    await withWatchable(async ({ kv, ws }) => {
      const live = new TestSink();
      const slow = new TestSink(1, false);
      const wl = ws.watch({ key: enc('k'), startRevision: 0 }, live);
      const wv = ws.watch({ key: enc('k'), startRevision: 0 }, slow);
      await put(kv, 'k', '1');
      await put(kv, 'k', '2');
      expect(wv.state).toBe('victim');
      const wu = ws.watch({ key: enc('k'), startRevision: 2 }, new TestSink());
      wl.cancel();
      wv.cancel();
      wu.cancel();
      await put(kv, 'k', '3');
      slow.drain();
      ws.kick();
      expect(live.summary()).toEqual(['PUT k@2=1', 'PUT k@3=2']);
      expect(slow.summary()).toEqual(['PUT k@2=1']);
      expect([wl.state, wv.state, wu.state]).toEqual(['canceled', 'canceled', 'canceled']);
      expect(ws.stats()).toEqual({ synced: 0, unsynced: 0, victims: 0 });
    });
  });

  it('progress is sent only to a synced watcher, at the current revision', async () => {
    await withWatchable(async ({ kv, ws }) => {
      for (let i = 0; i < 5; i++) await put(kv, 'k', `${i}`);
      const behind = new TestSink();
      const wb = ws.watch({ key: enc('k'), startRevision: 2 }, behind);
      expect(wb.requestProgress()).toBe(false);
      const sink = new TestSink();
      const w = ws.watch({ key: enc('zzz'), startRevision: 0 }, sink);
      expect(w.requestProgress()).toBe(true);
      expect(sink.received).toEqual([{ watchId: w.id, revision: 6, events: [], compactRevision: 0 }]);
      await waitFor(() => wb.state === 'synced', 'synced');
      expect(wb.requestProgress()).toBe(true);
      expect(behind.received.at(-1)).toMatchObject({ revision: 6, events: [] });
    });
  });
});

describe('WatchableStore: snapshot install', () => {
  /** A second store (the "leader") holding the same first `common` writes and then `extra` more. */
  async function withLeader(common: number, extra: number, f: (leader: KvStore) => Promise<void>): Promise<void> {
    const dir = await mkdtemp(join(tmpdir(), 'setpoint-watch-leader-'));
    const leader = await KvStore.open(dir);
    try {
      for (let i = 0; i < common + extra; i++) await put(leader, `r${i % 3}`, `${i}`);
      await f(leader);
    } finally {
      await leader.close();
      await rm(dir, { recursive: true, force: true });
    }
  }

  it('synced watchers catch up from the installed history after what they had seen', async () => {
    await withWatchable(async ({ kv, ws }) => {
      for (let i = 0; i < 10; i++) await put(kv, `r${i % 3}`, `${i}`);
      const sink = new TestSink();
      const w = ws.watch({ key: enc('r'), rangeEnd: enc('s'), startRevision: 5 }, sink);
      await waitFor(() => w.state === 'synced', 'synced');
      await withLeader(10, 25, async (leader) => {
        await kv.replaceWith(leader.snapshot());
        expect(kv.currentRev).toBe(36);
        await waitFor(() => w.state === 'synced' && sink.events().length === 32, 'caught up after install');
        expect(sink.summary()).toEqual(await historySummary(kv, 5, 36));
      });
      await put(kv, 'r9', 'live');
      expect(sink.summary().at(-1)).toBe('PUT r9@37=live');
    });
  });

  it('a synced watcher whose next revision the snapshot compacted away is told so', async () => {
    await withWatchable(async ({ kv, ws }) => {
      for (let i = 0; i < 10; i++) await put(kv, `r${i % 3}`, `${i}`);
      const sink = new TestSink();
      const w = ws.watch({ key: enc('r'), rangeEnd: enc('s'), startRevision: 0 }, sink);
      await withLeader(10, 25, async (leader) => {
        await leader.compact(20).done;
        await kv.replaceWith(leader.snapshot());
        await waitFor(() => w.state === 'compacted', 'compacted');
        expect(sink.received).toEqual([{ watchId: w.id, revision: 0, events: [], compactRevision: 20 }]);
      });
    });
  });
});
