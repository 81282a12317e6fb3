// The watch cache in front of the etcd storage, on a real etcd 3.4 and a real Setpoint store: the same
// conformance suite as the store-backed one, then what only the cache does — 1,000 watchers on one store
// watch, consistent lists that see the write just made (also on an idle resource), replay from its window
// and 410 past it, bookmarks when asked, termination of a watcher that falls behind, frozen objects.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cacher } from '../../../src/apiserver/storage/cacher/cacher.js';
import type { CacherOptions } from '../../../src/apiserver/storage/cacher/cacher.js';
import { EtcdStorage } from '../../../src/apiserver/storage/etcd3/etcd-storage.js';
import type { StoredObject } from '../../../src/apiserver/storage/interface.js';
import type { EtcdClient } from '../../../src/etcd-client/etcd-client.js';
import { STORE_KINDS, StoreTestCluster } from '../../etcd-client/helpers/store-cluster.js';
import { storageConformance } from './helpers/conformance.js';
import { WatchReader, labelled, pod, waitFor } from './helpers/objects.js';

describe.each(STORE_KINDS)('watch cache on %s', (kind) => {
  let cluster: StoreTestCluster;
  let client: EtcdClient;
  let etcd: EtcdStorage;
  const cachers: Cacher[] = [];
  let n = 0;

  /** A cache for a new resource prefix, on a client of its own (so its store watches can be counted). */
  async function cacher(opts: Partial<CacherOptions> = {}): Promise<{ c: Cacher; prefix: string; client: EtcdClient }> {
    const own = cluster.client();
    const prefix = opts.resourcePrefix ?? `/registry/cached-${n++}/`;
    const c = new Cacher({ storage: new EtcdStorage({ client: own }), resourcePrefix: prefix, ...opts });
    cachers.push(c);
    await c.whenReady();
    return { c, prefix, client: own };
  }

  beforeAll(async () => {
    cluster = await StoreTestCluster.start(kind);
    client = cluster.client();
    etcd = new EtcdStorage({ client });
  });
  afterAll(async () => {
    for (const c of cachers) await c.close();
    await cluster?.stop();
  });

  describe('conformance', () => {
    storageConformance(() => ({
      client,
      storage: async (prefix) => (await cacher({ resourcePrefix: prefix })).c,
    }));
  });

  it('serves 1,000 watchers through one store watch', async () => {
    const streams = await cluster.metric(0, 'etcd_debugging_mvcc_watch_stream_total');
    const { c, prefix, client: own } = await cacher();
    const from = String(await c.currentResourceVersion());
    const readers = Array.from({ length: 1000 }, (_, i) => new WatchReader(c.watch(prefix, { resourceVersion: from, ...(i % 2 ? { predicate: labelled({ app: 'web' }) } : {}) })));
    for (let i = 0; i < 20; i++) await etcd.create(`${prefix}default/p${i}`, pod(`p${i}`, { app: i % 4 === 0 ? 'web' : 'db' }));
    await Promise.all(readers.map((r, i) => r.until((seen) => seen.length >= (i % 2 ? 5 : 20), `watcher ${i}'s events`)));
    expect(readers[0]?.changes()).toEqual(Array.from({ length: 20 }, (_, i) => ['ADDED', `p${i}`]));
    expect(readers[1]?.changes()).toEqual([0, 4, 8, 12, 16].map((i) => ['ADDED', `p${i}`]));
    expect(c.stats()).toMatchObject({ watchers: 1000, storeWatches: 1, terminatedWatchers: 0 });
    // The store serves one more watch stream than before, with one watch on it: the cache's.
    expect(own.watchCount).toBe(1);
    expect(await cluster.metric(0, 'etcd_debugging_mvcc_watch_stream_total')).toBe(streams + 1);
    await Promise.all(readers.map((r) => r.stop()));
    expect(c.stats().watchers).toBe(0);
  });

  it('serves consistent lists that see the write just made, idle or not, without falling back', async () => {
    const { c, prefix } = await cacher();
    for (let i = 0; i < 30; i++) {
      await etcd.create(`${prefix}default/w${i}`, pod(`w${i}`));
      const list = await c.list(prefix);
      expect(list.items.map((o) => o.metadata.name)).toContain(`w${i}`);
    }
    // Writes elsewhere move the store's revision past the cache's. Neither store orders its answers to
    // progress requests (etcd-io/etcd#15220), so the cache compares its keys with the store's at that revision.
    const verified = c.stats().verifiedReads;
    for (let i = 0; i < 5; i++) {
      const head = (await client.put(`/elsewhere/${kind}`, String(i))).revision;
      const list = await c.list(prefix);
      expect(Number(list.resourceVersion)).toBeGreaterThanOrEqual(head);
      expect(list.items).toHaveLength(30);
    }
    expect(c.stats().consistentFallbacks).toBe(0);
    expect(c.stats().verifiedReads).toBeGreaterThanOrEqual(verified + 5);
    const rv0 = await c.list(prefix, { resourceVersion: '0' });
    expect(rv0.items).toHaveLength(30);
  });

  it('never serves a consistent list from a cache whose events are late, and serves it once they came', async () => {
    // Events reach this cache 400 ms late: until then the store has moved on from what the cache holds.
    const late = new EtcdStorage({ client: cluster.client() });
    const lateWatch = late.watch.bind(late);
    late.watch = (key, o) => {
      const w = lateWatch(key, o);
      const it = w[Symbol.asyncIterator]();
      return {
        stop: () => w.stop(),
        [Symbol.asyncIterator]: () => ({
          next: async () => {
            const r = await it.next();
            await new Promise((res) => setTimeout(res, 400));
            return r;
          },
        }),
      };
    };
    const prefix = `/registry/late-${kind}/`;
    const c = new Cacher({ storage: late, resourcePrefix: prefix });
    cachers.push(c);
    await c.whenReady();
    await etcd.create(`${prefix}default/a`, pod('a'));
    expect((await c.list(prefix)).items.map((o) => o.metadata.name)).toEqual(['a']);
    await etcd.delete(`${prefix}default/a`);
    expect((await c.list(prefix)).items).toEqual([]);
    await etcd.create(`${prefix}default/b`, pod('b'));
    await etcd.delete(`${prefix}default/b`);
    await etcd.create(`${prefix}default/c`, pod('c'));
    expect((await c.list(prefix)).items.map((o) => o.metadata.name)).toEqual(['c']);
    // Writes elsewhere only: the store confirms the cache holds the state at the newer revision.
    const head = (await client.put(`/elsewhere/late-${kind}`, 'x')).revision;
    const verified = c.stats().verifiedReads;
    const list = await c.list(prefix);
    expect([list.items.map((o) => o.metadata.name), Number(list.resourceVersion) >= head]).toEqual([['c'], true]);
    expect(c.stats().verifiedReads).toBe(verified + 1);
    expect(c.stats().consistentFallbacks).toBe(0);
  });

  it('replays a watch from inside its window and answers 410 for one older than the window', async () => {
    const { c, prefix } = await cacher({ window: { lowerBound: 10, upperBound: 10 } });
    const objs: StoredObject[] = [];
    for (let i = 0; i < 25; i++) objs.push(await etcd.create(`${prefix}default/r${i}`, pod(`r${i}`)));
    await c.list(prefix); // caught up
    const from = objs[19]?.metadata.resourceVersion as string;
    const w = new WatchReader(c.watch(prefix, { resourceVersion: from }));
    await w.until((seen) => seen.length >= 5, 'the replay');
    expect(w.changes()).toEqual([20, 21, 22, 23, 24].map((i) => ['ADDED', `r${i}`]));
    await w.stop();
    const stats = c.stats();
    expect([stats.windowEvents, stats.windowCapacity]).toEqual([10, 10]);
    const old = objs[5]?.metadata.resourceVersion as string;
    const gone = new WatchReader(c.watch(prefix, { resourceVersion: old }));
    const [e] = await gone.until((seen) => seen.length >= 1, 'the 410');
    const oldest = Number(objs[15]?.metadata.resourceVersion) - 1;
    expect([e?.type, e?.object['code'], e?.object['reason'], e?.object['message']]).toEqual(['ERROR', 410, 'Expired', `too old resource version: ${old} (${oldest})`]);
  });

  it('sends bookmarks only when asked, every interval and before the timeout', async () => {
    const { c, prefix } = await cacher({ bookmarkIntervalMs: 200 });
    const a = await etcd.create(`${prefix}default/b`, pod('b'));
    const rv = a.metadata.resourceVersion as string;
    const asked = new WatchReader(c.watch(prefix, { resourceVersion: rv, allowBookmarks: true }));
    const plain = new WatchReader(c.watch(prefix, { resourceVersion: rv }));
    const later = await etcd.create(`${prefix}default/c`, pod('c'));
    await asked.until((seen) => seen.filter((e) => e.type === 'BOOKMARK' && Number(e.rv) >= Number(later.metadata.resourceVersion)).length >= 2, 'two bookmarks');
    expect(plain.changes()).toEqual([['ADDED', 'c']]);
    expect(plain.seen.some((e) => e.type === 'BOOKMARK')).toBe(false);
    // Bookmarks never go back behind an event already sent.
    const revs = asked.seen.map((e) => Number(e.rv));
    expect(revs).toEqual([...revs].sort((x, y) => x - y));
    await Promise.all([asked.stop(), plain.stop()]);

    const { c: slowTick, prefix: p2 } = await cacher({ bookmarkIntervalMs: 60_000 });
    const t0 = Date.now();
    const timed = new WatchReader(slowTick.watch(p2, { resourceVersion: String(await slowTick.currentResourceVersion()), allowBookmarks: true, timeoutSeconds: 3 }));
    await timed.until((seen) => seen.some((e) => e.type === 'BOOKMARK'), 'the bookmark before the timeout');
    await waitFor('the watch to time out', async () => (timed.ended ? true : undefined));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2900);
    expect(timed.seen.map((e) => e.type)).toEqual(['BOOKMARK']);
  });

  it('terminates a watcher that falls behind, and no one else', async () => {
    const { c, prefix } = await cacher({ watcherQueueSize: 5 });
    const from = String(await c.currentResourceVersion());
    const stuck = c.watch(prefix, { resourceVersion: from });
    const it0 = stuck[Symbol.asyncIterator]();
    const first = it0.next(); // registered, then never read again
    const reader = new WatchReader(c.watch(prefix, { resourceVersion: from }));
    for (let i = 0; i < 20; i++) await etcd.create(`${prefix}default/s${i}`, pod(`s${i}`));
    await reader.until((seen) => seen.length >= 20, 'all events');
    expect((await first).value?.object.metadata.name).toBe('s0');
    await waitFor('the stuck watcher to be terminated', async () => (c.stats().terminatedWatchers === 1 ? true : undefined));
    // Its watch ends; what it had queued is dropped (its client watches again from the last version it saw).
    expect((await it0.next()).done).toBe(true);
    expect(c.stats().watchers).toBe(1);
    await reader.stop();
  });

  it('hands out frozen objects that no reader can change under another', async () => {
    const { c, prefix } = await cacher();
    await etcd.create(`${prefix}default/f`, pod('f'));
    const [o] = (await c.list(prefix)).items;
    expect(() => {
      (o as StoredObject).metadata.name = 'changed';
    }).toThrow(TypeError);
    expect((await c.list(prefix, { resourceVersion: '0' })).items[0]?.metadata.name).toBe('f');
  });
});
