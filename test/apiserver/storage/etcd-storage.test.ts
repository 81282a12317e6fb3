// The etcd-backed Storage on a real etcd 3.4 and a real Setpoint store: the shared conformance suite, plus
// what only the store-backed one does (bookmarks from the store's progress notifications).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdStorage } from '../../../src/apiserver/storage/etcd3/etcd-storage.js';
import type { EtcdClient } from '../../../src/etcd-client/etcd-client.js';
import { STORE_KINDS, StoreTestCluster } from '../../etcd-client/helpers/store-cluster.js';
import { storageConformance } from './helpers/conformance.js';
import { WatchReader, pod } from './helpers/objects.js';

describe.each(STORE_KINDS)('etcd storage on %s', (kind) => {
  let cluster: StoreTestCluster;
  let client: EtcdClient;
  let storage: EtcdStorage;

  beforeAll(async () => {
    cluster = await StoreTestCluster.start(kind);
    client = cluster.client();
    storage = new EtcdStorage({ client, pageSize: 7 });
  });
  afterAll(async () => {
    await storage?.close();
    await cluster?.stop();
  });

  storageConformance(() => ({ client, storage: () => Promise.resolve(storage) }));

  it("turns the store's progress notifications into BOOKMARKs when asked for", async () => {
    // Answers to progress requests count only from a client told to trust them (etcd >= 3.4.31 / 3.5.13).
    const trusting = new EtcdStorage({ client: cluster.client({ trustProgressRequests: true }) });
    const storage = trusting;
    const a = await storage.create('/registry/bm/default/a', pod('a'));
    const w = new WatchReader(storage.watch('/registry/bm/', { resourceVersion: a.metadata.resourceVersion as string, allowBookmarks: true }));
    const plain = new WatchReader(storage.watch('/registry/bm/', { resourceVersion: a.metadata.resourceVersion as string }));
    const head = (await client.put('/elsewhere/x', '1')).revision;
    await w.until((seen) => {
      void storage.requestWatchProgress();
      return seen.some((e) => e.type === 'BOOKMARK' && Number(e.rv) >= head);
    }, 'a bookmark');
    expect(w.seen.every((e) => e.type === 'BOOKMARK' && Object.keys(e.object.metadata).join() === 'resourceVersion')).toBe(true);
    await plain.stop();
    expect(plain.seen).toEqual([]);
    await w.stop();
  });
});
