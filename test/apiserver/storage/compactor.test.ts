// The compactor on etcd 3.4 and Setpoint's store: each round compacts to the revision seen one round before,
// and two API servers' compactors on one store take turns through compact_rev_key (one compacts per round).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPACT_REV_KEY, Compactor } from '../../../src/apiserver/storage/etcd3/compactor.js';
import type { EtcdClient } from '../../../src/etcd-client/etcd-client.js';
import { EtcdClientError } from '../../../src/etcd-client/errors.js';
import { STORE_KINDS, StoreTestCluster } from '../../etcd-client/helpers/store-cluster.js';
import { waitFor } from './helpers/objects.js';

/** The oldest revision the store still serves at or above `from` (found by asking). */
async function compactedTo(c: EtcdClient, from: number): Promise<number> {
  for (let rev = from; ; rev++) {
    try {
      await c.range('any', { revision: rev });
      return rev;
    } catch (e) {
      if (!(e instanceof EtcdClientError && e.code === 'ETCD_COMPACTED')) throw e;
    }
  }
}

describe.each(STORE_KINDS)('compactor on %s', (kind) => {
  let cluster: StoreTestCluster;
  let client: EtcdClient;
  beforeAll(async () => {
    cluster = await StoreTestCluster.start(kind);
    client = cluster.client();
  });
  afterAll(async () => cluster?.stop());

  it('compacts to the revision of the round before, one API server per round', async () => {
    const a = new Compactor(client);
    const b = new Compactor(cluster.client());
    // Round 1: a takes the turn and only records where the store is (nothing compacted on start).
    await a.step();
    const seenByA = (await client.get(COMPACT_REV_KEY))?.modRevision ?? 0;
    await b.step(); // b's compare fails: it learns the version a wrote
    for (let i = 0; i < 5; i++) await client.put('compact/k', String(i));
    expect(a.compactRevision).toBe(0);

    // Round 2: a compacts to what it saw in round 1; b, a round behind, compacts nothing.
    await a.step();
    expect(a.compactRevision).toBe(seenByA);
    expect(await compactedTo(client, 1)).toBe(seenByA);
    const headAfterA = (await client.get(COMPACT_REV_KEY))?.modRevision ?? 0;
    await b.step();
    expect(b.compactRevision).toBe(seenByA);
    expect(await compactedTo(client, 1)).toBe(seenByA);

    // a dies: b's next round takes the turn (its compare now holds) and compacts on.
    for (let i = 0; i < 5; i++) await client.put('compact/k', `b${i}`);
    await b.step();
    const key = await client.get(COMPACT_REV_KEY);
    expect(key?.version).toBe(3);
    expect(b.compactRevision).toBe(headAfterA);
    expect(await compactedTo(client, 1)).toBe(b.compactRevision);
  });

  it('runs on its interval', async () => {
    const first = (await client.put('compact/timer', 'x')).revision;
    const c = new Compactor(client, { intervalMs: 200 });
    c.start();
    try {
      await waitFor('a compaction past the first write', async () => (c.compactRevision > first ? true : undefined), 30_000);
      await expect(client.range('compact/timer', { revision: first })).rejects.toMatchObject({ code: 'ETCD_COMPACTED' });
    } finally {
      await c.stop();
    }
  });
});
