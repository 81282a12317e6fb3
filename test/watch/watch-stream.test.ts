// The per-client Watch stream: ids, create failures, cancel, the empty-key rule, prev_kv, progress
// (requested and periodic), fragments, compaction, a consumer that pushes back, and close.
import { describe, expect, it } from 'vitest';
import type { KvStore } from '../../src/kv/kv-store.js';
import { prefixEnd } from '../../src/kv/key-range.js';
import type { WatchResponse } from '../../src/watch/types.js';
import type { WatchableStore } from '../../src/watch/watchable-store.js';
import { responseSize } from '../../src/watch/fragment.js';
import { ERR_DUPLICATE_WATCH_ID, ERR_EMPTY_WATCHER_RANGE, WatchStream, type WatchStreamOptions } from '../../src/watch/watch-stream.js';
import { dec, enc, historySummary, summarize, waitFor, withWatchable } from './helpers.js';

const put = (kv: KvStore, k: string, v: string) => kv.put({ key: enc(k), value: enc(v) });

/** Records what the stream sends; `accept = false` makes send() push back. */
class Client {
  readonly got: WatchResponse[] = [];
  accept = true;
  readonly send = (r: WatchResponse): boolean => {
    this.got.push(r);
    return this.accept;
  };

  of(watchId: number): WatchResponse[] {
    return this.got.filter((r) => r.watchId === watchId);
  }

  events(watchId: number): string[] {
    return this.of(watchId).flatMap((r) => r.events.map(summarize));
  }

  /** Waits for a response matching `p` and returns it. */
  async next(p: (r: WatchResponse) => boolean, what: string): Promise<WatchResponse> {
    await waitFor(() => this.got.some(p), what);
    return this.got.find(p) as WatchResponse;
  }
}

interface StreamEnv {
  readonly kv: KvStore;
  readonly ws: WatchableStore;
  readonly stream: WatchStream;
  readonly client: Client;
}

async function withStream(f: (env: StreamEnv) => Promise<void>, opts: WatchStreamOptions = {}): Promise<void> {
  await withWatchable(async ({ kv, ws }) => {
    const client = new Client();
    const stream = new WatchStream(ws, client.send, opts);
    try {
      await f({ kv, ws, stream, client });
    } finally {
      stream.close();
    }
  });
}

/** A response with nothing but a header: a progress notification as clientv3 recognises one. */
const isProgress = (r: WatchResponse): boolean =>
  r.events.length === 0 && !r.created && !r.canceled && r.compactRevision === 0 && r.header.revision !== 0;

describe('WatchStream: create', () => {
  it('assigns ids from 0, honours a client id, skips ids in use, and replies created at the current revision', async () => {
    await withStream(async ({ kv, stream, client }) => {
      await put(kv, 'a', '1');
      stream.create({ key: enc('a') });
      stream.create({ key: enc('a'), watchId: 2 });
      stream.create({ key: enc('a') });
      stream.create({ key: enc('a') });
      await waitFor(() => client.got.length === 4, 'four created');
      expect(client.got.map((r) => [r.watchId, r.created, r.canceled, r.header.revision])).toEqual([
        [0, true, false, 2],
        [2, true, false, 2],
        [1, true, false, 2],
        [3, true, false, 2],
      ]);
      expect(client.got[0]).toEqual({
        header: { revision: 2 },
        watchId: 0,
        created: true,
        canceled: false,
        compactRevision: 0,
        cancelReason: '',
        fragment: false,
        events: [],
      });
    });
  });

  it('a duplicate id fails with created, canceled, watch_id -1 and mvcc’s reason; the first watch keeps working', async () => {
    await withStream(async ({ kv, stream, client }) => {
      stream.create({ key: enc('a'), watchId: 5 });
      stream.create({ key: enc('b'), watchId: 5 });
      await waitFor(() => client.got.length === 2, 'two replies');
      expect(client.got[1]).toMatchObject({ watchId: -1, created: true, canceled: true, cancelReason: ERR_DUPLICATE_WATCH_ID });
      expect(ERR_DUPLICATE_WATCH_ID).toBe('mvcc: duplicate watch ID provided on the WatchStream');
      await put(kv, 'a', '1');
      await put(kv, 'b', '1');
      await waitFor(() => client.events(5).length === 1, 'event');
      expect(client.events(5)).toEqual(['PUT a@2=1']);
    });
  });

  it('a range whose end is not after its key fails as an empty range', async () => {
    await withStream(async ({ stream, client }) => {
      stream.create({ key: enc('b'), rangeEnd: enc('a') });
      stream.create({ key: enc('b'), rangeEnd: enc('b') });
      await waitFor(() => client.got.length === 2, 'two replies');
      for (const r of client.got) expect(r).toMatchObject({ watchId: -1, created: true, canceled: true, cancelReason: ERR_EMPTY_WATCHER_RANGE });
    });
  });

  it('an empty key is "\\0": with range_end "\\0" it watches every key, alone it watches key "\\0"', async () => {
    await withStream(async ({ kv, stream, client }) => {
      stream.create({ key: new Uint8Array(0), rangeEnd: Uint8Array.of(0) }); // 0: everything
      stream.create({}); // 1: the key "\0"
      stream.create({ key: enc('m'), rangeEnd: Uint8Array.of(0) }); // 2: from "m" on
      await put(kv, 'a', '1');
      await put(kv, '\0', 'nul');
      await put(kv, 'z', '2');
      await waitFor(() => client.events(0).length === 3, 'all three');
      await waitFor(() => client.events(2).length === 1, 'from-key');
      expect(client.events(0)).toEqual(['PUT a@2=1', 'PUT \0@3=nul', 'PUT z@4=2']);
      expect(client.events(1)).toEqual(['PUT \0@3=nul']);
      expect(client.events(2)).toEqual(['PUT z@4=2']);
    });
  });

  it('event responses carry the revision and no created/canceled flags', async () => {
    await withStream(async ({ kv, stream, client }) => {
      stream.create({ key: enc('k'), filters: ['NODELETE'] });
      await put(kv, 'k', 'v');
      await kv.deleteRange({ key: enc('k') });
      await put(kv, 'k', 'w');
      await waitFor(() => client.events(0).length === 2, 'events');
      expect(client.of(0).slice(1).map((r) => [r.header.revision, r.created, r.canceled, r.fragment, r.events.length])).toEqual([
        [2, false, false, false, 1],
        [4, false, false, false, 1],
      ]);
    });
  });
});

describe('WatchStream: cancel and close', () => {
  it('cancel replies canceled for that id and stops its events; an unknown id gets no reply', async () => {
    await withStream(async ({ kv, stream, client }) => {
      stream.create({ key: enc('k'), watchId: 7 });
      await put(kv, 'k', '1');
      await waitFor(() => client.events(7).length === 1, 'first event');
      stream.cancel(7);
      stream.cancel(42);
      await put(kv, 'k', '2');
      // A progress request is answered in order, so once it is back every earlier reply is in.
      stream.requestProgress();
      await client.next((r) => r.watchId === -1, 'progress');
      expect(client.got.slice(2).map((r) => [r.watchId, r.canceled, r.header.revision])).toEqual([
        [7, true, 2],
        [-1, false, 3],
      ]);
      expect(client.events(7)).toEqual(['PUT k@2=1']);
      // The id is free again (0 cannot be reused this way: it asks for an automatic id).
      stream.create({ key: enc('k'), watchId: 7 });
      await client.next((r) => r.watchId === 7 && r.created && r.header.revision === 3, 'recreated');
    });
  });

  it('close cancels every watcher and sends nothing more', async () => {
    await withWatchable(async ({ kv, ws }) => {
      const client = new Client();
      const stream = new WatchStream(ws, client.send);
      stream.create({ key: enc('k') });
      stream.create({ key: enc('a'), rangeEnd: enc('z'), startRevision: 1 });
      await waitFor(() => client.got.length === 2, 'created');
      stream.close();
      expect(ws.stats()).toEqual({ synced: 0, unsynced: 0, victims: 0 });
      await put(kv, 'k', '1');
      stream.create({ key: enc('k') });
      await new Promise((r) => setImmediate(r));
      expect(client.got).toHaveLength(2);
    });
  });
});

describe('WatchStream: prev_kv', () => {
  it('live and history events carry the previous key-value when asked', async () => {
    await withStream(async ({ kv, stream, client }) => {
      await put(kv, 'k', 'v1'); // 2
      await put(kv, 'k', 'v2'); // 3
      stream.create({ key: enc('k'), startRevision: 2, prevKv: true });
      stream.create({ key: enc('k'), startRevision: 2 });
      await waitFor(() => client.events(0).length === 2 && client.events(1).length === 2, 'history');
      await kv.deleteRange({ key: enc('k') }); // 4
      await waitFor(() => client.events(0).length === 3, 'live');
      const prev = (id: number) => client.of(id).flatMap((r) => r.events.map((e) => (e.prevKv ? dec(e.prevKv.value) : '-')));
      expect(prev(0)).toEqual(['-', 'v1', 'v2']);
      await waitFor(() => client.events(1).length === 3, 'live, plain');
      expect(prev(1)).toEqual(['-', '-', '-']);
    });
  });
});

describe('WatchStream: progress', () => {
  it('a progress request with every watcher synced is answered with watch_id -1 at the current revision', async () => {
    await withStream(async ({ kv, stream, client }) => {
      await put(kv, 'x', '1');
      stream.create({ key: enc('k') });
      stream.requestProgress();
      const r = await client.next((x) => x.watchId === -1, 'progress');
      expect(r).toEqual({ header: { revision: 2 }, watchId: -1, created: false, canceled: false, compactRevision: 0, cancelReason: '', fragment: false, events: [] });
      expect(isProgress(r)).toBe(true);
    });
  });

  it('waits for a watcher that is catching up, and comes after all its events', async () => {
    await withStream(
      async ({ kv, stream, client }) => {
        for (let i = 0; i < 400; i++) await put(kv, `k${i % 3}`, `${i}`);
        stream.create({ key: enc('k'), rangeEnd: enc('l'), startRevision: 2 });
        stream.create({ key: enc('other') });
        stream.requestProgress();
        stream.requestProgress(); // coalesced with the first
        const progress = await client.next((r) => r.watchId === -1, 'progress');
        const at = client.got.indexOf(progress);
        const events = client.got.slice(0, at).flatMap((r) => r.events);
        // Everything up to the revision it vouches for was sent before it.
        expect(progress.header.revision).toBe(401);
        expect(events.map(summarize)).toEqual(await historySummary(kv, 2, 401));
        await put(kv, 'k0', 'after');
        await waitFor(() => client.events(0).length === 401, 'live');
        expect(client.got.filter((r) => r.watchId === -1)).toHaveLength(1);
      },
      { progressIntervalMs: 0 },
    );
  });

  it('periodic progress goes to synced watchers with progress_notify that had no events since the last tick', async () => {
    await withStream(
      async ({ kv, stream, client }) => {
        await put(kv, 'x', '1');
        stream.create({ key: enc('k'), progressNotify: true }); // 0
        stream.create({ key: enc('k') }); // 1: not asked
        const first = await client.next((r) => r.watchId === 0 && isProgress(r), 'periodic progress');
        expect(first.header.revision).toBe(2);
        await put(kv, 'y', '2');
        await client.next((r) => r.watchId === 0 && isProgress(r) && r.header.revision === 3, 'progress at the new head');
        expect(client.of(1).filter(isProgress)).toEqual([]);
      },
      { progressIntervalMs: 20 },
    );
  });
});

describe('WatchStream: fragments', () => {
  const limit = 2000;

  it('splits a revision too big for one response when fragment is set; otherwise sends it whole', async () => {
    await withStream(
      async ({ kv, stream, client }) => {
        stream.create({ key: enc('f/'), rangeEnd: prefixEnd(enc('f/')), fragment: true }); // 0
        stream.create({ key: enc('f/'), rangeEnd: prefixEnd(enc('f/')) }); // 1
        const value = 'v'.repeat(300);
        await kv.txn({ success: Array.from({ length: 20 }, (_, i) => ({ requestPut: { key: enc(`f/${i}`), value: enc(value) } })) });
        await waitFor(() => client.events(0).length === 20 && client.events(1).length === 20, 'events');
        const parts = client.of(0).filter((r) => r.events.length > 0);
        expect(parts.length).toBeGreaterThan(1);
        parts.forEach((p, i) => {
          expect(p.fragment).toBe(i < parts.length - 1);
          expect(p.header.revision).toBe(2);
          expect(responseSize(p)).toBeLessThan(limit);
        });
        expect(client.of(1).filter((r) => r.events.length > 0)).toHaveLength(1);
        expect(client.of(1).every((r) => !r.fragment)).toBe(true);
      },
      { maxResponseBytes: limit },
    );
  });

  it('fragments a catch-up response too, and the parts join up to the history', async () => {
    await withStream(
      async ({ kv, stream, client }) => {
        for (let i = 0; i < 40; i++) await put(kv, `h${i % 4}`, 'x'.repeat(200));
        stream.create({ key: enc('h'), rangeEnd: enc('i'), startRevision: 2, fragment: true });
        stream.requestProgress();
        await client.next((r) => r.watchId === -1, 'caught up');
        const parts = client.of(0).filter((r) => r.events.length > 0);
        expect(parts.length).toBeGreaterThan(1);
        expect(parts.at(-1)?.fragment).toBe(false);
        expect(parts.slice(0, -1).every((p) => p.fragment)).toBe(true);
        expect(client.events(0)).toEqual(await historySummary(kv, 2, 41));
      },
      { maxResponseBytes: limit },
    );
  });
});

describe('WatchStream: compaction', () => {
  it('a watch from below the compacted revision is created, then canceled with compact_revision and no reason', async () => {
    await withStream(async ({ kv, stream, client }) => {
      for (let i = 0; i < 10; i++) await put(kv, 'k', `${i}`);
      await kv.compact(8).done;
      stream.create({ key: enc('k'), startRevision: 3, watchId: 4 });
      const canceled = await client.next((r) => r.canceled, 'canceled');
      expect(client.got[0]).toMatchObject({ watchId: 4, created: true, canceled: false });
      expect(canceled).toEqual({ header: { revision: 0 }, watchId: 4, created: false, canceled: true, compactRevision: 8, cancelReason: '', fragment: false, events: [] });
      // As in etcd the id stays taken until the client cancels it.
      stream.create({ key: enc('k'), watchId: 4 });
      await client.next((r) => r.cancelReason === ERR_DUPLICATE_WATCH_ID, 'duplicate');
    });
  });
});

describe('WatchStream: many watches on one stream', () => {
  it('1000 watches on one prefix each get every event; a brisk consumer makes no victims', async () => {
    await withStream(async ({ kv, ws, stream, client }) => {
      for (let i = 0; i < 1000; i++) stream.create({ key: enc('/p/'), rangeEnd: prefixEnd(enc('/p/')) });
      for (let i = 0; i < 20; i++) await put(kv, `/p/${i}`, `${i}`);
      await waitFor(() => client.got.length === 1000 + 1000 * 20, 'every response');
      const expected = await historySummary(kv, 2, 21);
      for (const id of [0, 499, 999]) expect(client.events(id)).toEqual(expected);
      expect(ws.stats()).toEqual({ synced: 1000, unsynced: 0, victims: 0 });
    });
  });
});

describe('WatchStream: a consumer that pushes back', () => {
  it('pauses on send() = false without blocking writes, and on resume delivers every event in order', async () => {
    await withStream(
      async ({ kv, ws, stream, client }) => {
        stream.create({ key: enc('s/'), rangeEnd: prefixEnd(enc('s/')), prevKv: true });
        await waitFor(() => client.got.length === 1, 'created');
        client.accept = false;
        for (let i = 0; i < 300; i++) {
          await put(kv, `s/${i % 7}`, `${i}`);
          if (i % 50 === 0) await new Promise((r) => setImmediate(r));
        }
        // The stream took one response and stopped; the watcher's buffer of 8 filled and it was set aside.
        await waitFor(() => ws.stats().victims === 1, 'victim');
        expect(client.got.length).toBeLessThan(10);
        client.accept = true;
        await waitFor(() => {
          stream.resume();
          return client.events(0).length === 300;
        }, 'every event');
        expect(client.events(0)).toEqual(await historySummary(kv, 2, 301));
        const events = client.of(0).flatMap((r) => r.events);
        expect(events.slice(7).every((e) => e.prevKv !== undefined)).toBe(true);
      },
      { bufferLen: 8 },
    );
  });

  it('folds the revisions that wait while the consumer is behind into fewer responses, whole and in order', async () => {
    await withStream(
      async ({ kv, stream, client }) => {
        stream.create({ key: enc('m/'), rangeEnd: prefixEnd(enc('m/')) });
        await waitFor(() => client.got.length === 1, 'created');
        // Keeping up: one response per revision, as etcd sends to a synced watcher.
        for (let i = 0; i < 5; i++) {
          await kv.txn({ compare: [], success: [{ requestPut: { key: enc(`m/a${i}`), value: enc('x') } }, { requestPut: { key: enc(`m/b${i}`), value: enc('y') } }], failure: [] });
          await waitFor(() => client.events(0).length === 2 * (i + 1), 'delivered');
        }
        expect(client.of(0).map((r) => r.events.length)).toEqual([0, 2, 2, 2, 2, 2]);
        // Behind: the next 40 two-event revisions wait in the queue and are merged there.
        client.accept = false;
        await kv.put({ key: enc('m/first'), value: enc('1') });
        await waitFor(() => client.events(0).length === 11, 'the response that made the stream pause');
        for (let i = 0; i < 40; i++) {
          await kv.txn({ compare: [], success: [{ requestPut: { key: enc(`m/c${i}`), value: enc('x') } }, { requestPut: { key: enc(`m/d${i}`), value: enc('y') } }], failure: [] });
        }
        client.accept = true;
        const before = client.got.length;
        await waitFor(() => {
          stream.resume();
          return client.events(0).length === 91;
        }, 'every event');
        const later = client.got.slice(before);
        expect(later.length).toBeLessThan(40);
        for (const r of later) {
          // Whole revisions (both puts of a txn together), ascending, the header at the last one.
          const revs = r.events.map((e) => e.kv.modRevision);
          expect(revs.length % 2).toBe(0);
          for (let i = 0; i < revs.length; i += 2) expect(revs[i]).toBe(revs[i + 1]);
          expect([...revs].sort((a, b) => a - b)).toEqual(revs);
          expect(r.header.revision).toBe(revs[revs.length - 1]);
        }
        expect(client.events(0)).toEqual(await historySummary(kv, 2, kv.currentRev));
      },
      { bufferLen: 1000 },
    );
  });
});
