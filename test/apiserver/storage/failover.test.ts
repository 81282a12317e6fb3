// The storage and its watch cache on three-member clusters of etcd 3.4 and of Setpoint's store, with members
// SIGKILLed: watches through the cache and straight on the store go on from another member with every
// revision exactly once; a cache cut off while the store compacts its history relists, and its watchers
// are told their resourceVersion is too old.
import { describe, expect, it } from 'vitest';
import { Cacher } from '../../../src/apiserver/storage/cacher/cacher.js';
import { EtcdStorage } from '../../../src/apiserver/storage/etcd3/etcd-storage.js';
import type { StoredObject } from '../../../src/apiserver/storage/interface.js';
import { STORE_KINDS, StoreTestCluster } from '../../etcd-client/helpers/store-cluster.js';
import { WatchReader, pod, waitFor } from './helpers/objects.js';

function startingAt(cluster: StoreTestCluster, first: number): string[] {
  const all = cluster.endpoints();
  return [...all.slice(first), ...all.slice(0, first)];
}

const counterOf = (o: StoredObject | undefined): number => Number((o?.metadata['annotations'] as Record<string, string> | undefined)?.['n'] ?? 0);

describe.each(STORE_KINDS)('storage failover on %s', (kind) => {
  it('keeps cache and store watches whole across a SIGKILL of the member serving them', async () => {
    const cluster = await StoreTestCluster.start(kind, { size: 3 });
    const prefix = '/registry/pods/';
    const cacher = new Cacher({ storage: new EtcdStorage({ client: cluster.client({ endpoints: startingAt(cluster, await cluster.leader()) }) }), resourcePrefix: prefix });
    try {
      const leader = await cluster.leader();
      const watcherClient = cluster.client({ endpoints: startingAt(cluster, leader) });
      const direct = new EtcdStorage({ client: watcherClient });
      const writer = new EtcdStorage({ client: cluster.client({ endpoints: startingAt(cluster, (leader + 1) % 3) }) });
      await cacher.whenReady();
      for (let i = 0; i < 5; i++) await writer.create(`${prefix}default/p${i}`, pod(`p${i}`));
      const from = String(await writer.currentResourceVersion());
      const cached = new WatchReader(cacher.watch(prefix, { resourceVersion: from }));
      const straight = new WatchReader(direct.watch(prefix, { resourceVersion: from }));
      let stop = false;
      let updates = 0;
      const writes = (async () => {
        for (let i = 0; !stop; i++) {
          try {
            await writer.guaranteedUpdate(`${prefix}default/p${i % 5}`, {}, async (cur) => ({ ...(cur as StoredObject), metadata: { ...(cur as StoredObject).metadata, annotations: { n: String(counterOf(cur) + 1) } } }));
            updates++;
          } catch {
            // An ambiguous write during the election: the watches show whether it landed.
          }
        }
      })();
      await cached.until((s) => s.length >= 60, '60 events before the kill');
      await cluster.kill(leader);
      const after = cached.seen.length;
      await cached.until((s) => s.length >= after + 100, '100 events after the kill', 60_000);
      stop = true;
      await writes;
      const head = await writer.currentResourceVersion();
      for (const r of [cached, straight]) await r.until((s) => Number(s.at(-1)?.rv) === head, `events up to ${head}`, 60_000);
      // Only the writer writes under the prefix, one revision per update: each watch saw every one, once.
      const expected = Array.from({ length: head - Number(from) }, (_, i) => String(Number(from) + 1 + i));
      expect(cached.seen.map((e) => e.rv)).toEqual(expected);
      expect(straight.seen.map((e) => e.rv)).toEqual(expected);
      expect(cached.seen.every((e) => e.type === 'MODIFIED')).toBe(true);
      expect(updates).toBeGreaterThan(100);
      // Still one store watch: the client re-created it on another member from its last revision.
      expect(cacher.stats()).toMatchObject({ storeWatches: 1, relists: 0 });
      expect(watcherClient.endpoint).not.toBe(cluster.clientUrl(leader));
      const list = await cacher.list(prefix);
      expect(list.items.map((o) => counterOf(o))).toEqual((await writer.list(prefix)).items.map((o) => counterOf(o)));
      await Promise.all([cached.stop(), straight.stop()]);
    } finally {
      await cacher.close();
      await cluster.stop();
    }
  });

  it('relists when the store compacted past the cache while it was cut off, and tells its watchers', async () => {
    const cluster = await StoreTestCluster.start(kind, { size: 3 });
    const prefix = '/registry/configmaps/';
    // The cache's client knows one follower only: killing it cuts the cache off while the others go on.
    const cut = ((await cluster.leader()) + 1) % 3;
    const cacher = new Cacher({ storage: new EtcdStorage({ client: cluster.client({ endpoints: [cluster.clientUrl(cut)] }) }), resourcePrefix: prefix });
    try {
      const others = cluster.client({ endpoints: [0, 1, 2].filter((i) => i !== cut).map((i) => cluster.clientUrl(i)) });
      const writer = new EtcdStorage({ client: others });
      await cacher.whenReady();
      const a = await writer.create(`${prefix}default/a`, pod('a'));
      await waitFor('the cache to have a', async () => (cacher.stats().objects === 1 ? true : undefined));
      const w = new WatchReader(cacher.watch(prefix, { resourceVersion: a.metadata.resourceVersion as string }));
      await cluster.kill(cut);
      for (let i = 0; i < 10; i++) await writer.create(`${prefix}default/b${i}`, pod(`b${i}`));
      await writer.delete(`${prefix}default/a`);
      await others.compact(await writer.currentResourceVersion());
      await cluster.restart(cut);
      await waitFor('the cache to relist', async () => (cacher.stats().relists === 1 && cacher.stats().ready ? true : undefined), 60_000);
      // The relist ended the watcher; watching again from where it was is too old for the new window.
      await waitFor('the watcher to end', async () => (w.ended ? true : undefined));
      expect(w.changes()).toEqual([]);
      const again = new WatchReader(cacher.watch(prefix, { resourceVersion: a.metadata.resourceVersion as string }));
      const [e] = await again.until((s) => s.length >= 1, 'the 410');
      expect([e?.type, e?.object['code'], e?.object['message']]).toEqual(['ERROR', 410, `too old resource version: ${a.metadata.resourceVersion} (${cacher.stats().revision})`]);
      const list = await cacher.list(prefix);
      expect(list.items.map((o) => o.metadata.name)).toEqual(Array.from({ length: 10 }, (_, i) => `b${i}`));
    } finally {
      await cacher.close();
      await cluster.stop();
    }
  });
});
