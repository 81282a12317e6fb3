// A member gathers a ranged delete's prevKvs only where a client waits for the answer (member/applier.ts):
// on three real members, a delete with prev_kv sent to the leader and to each follower (which forwards it)
// answers with every old key and value, and so does a txn holding one. Every member then holds the same
// key space and agrees on the revision.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdClient } from '../../../src/etcd-client/etcd-client.js';
import { StoreCluster } from '../../../src/harness/store-cluster.js';

const KEYS = 300;
const key = (p: string, i: number): string => `${p}/${String(i).padStart(4, '0')}`;

describe('a ranged delete with prev_kv', () => {
  let cluster: StoreCluster;
  const clients = new Map<string, EtcdClient>();

  beforeAll(async () => {
    cluster = await StoreCluster.start({ program: 'setpoint', token: 'delete-prev-kv' });
    for (const n of cluster.names()) clients.set(n, new EtcdClient({ endpoints: [cluster.clientUrl(n)], callTimeoutMs: 30_000 }));
  }, 60_000);

  afterAll(async () => {
    for (const c of clients.values()) c.close();
    await cluster?.destroy();
  });

  async function fill(c: EtcdClient, p: string): Promise<void> {
    for (let i = 0; i < KEYS; i += 100) {
      await c.txn({ compare: [], success: Array.from({ length: 100 }, (_, j) => ({ put: { key: key(p, i + j), value: `v-${p}-${i + j}` } })) });
    }
  }

  const expected = (p: string): string[] => Array.from({ length: KEYS }, (_, i) => `${key(p, i)}=v-${p}-${i}`);

  it('answers every old key and value through the leader and through each follower', async () => {
    const leader = await cluster.waitForLeader();
    const order = [leader, ...cluster.names().filter((n) => n !== leader)];
    for (const [i, n] of order.entries()) {
      const c = clients.get(n) as EtcdClient;
      const p = `d${i}`;
      await fill(c, p);
      const res = await c.deleteRange(p + '/', { prefix: true, prevKv: true });
      expect(res.deleted, `deleted through ${n}`).toBe(KEYS);
      expect(res.prevKvs.map((kv) => `${kv.key.toString()}=${kv.value.toString()}`), `prevKvs through ${n}`).toEqual(expected(p));
    }
  }, 60_000);

  it('answers them from inside a txn sent to a follower', async () => {
    const leader = await cluster.waitForLeader();
    const follower = cluster.names().find((n) => n !== leader) as string;
    const c = clients.get(follower) as EtcdClient;
    await fill(c, 't');
    const res = await c.txn({ compare: [], success: [{ deleteRange: { key: 't/', prefix: true, prevKv: true } }] });
    const op = res.results[0];
    expect(op?.kind).toBe('deleteRange');
    if (op?.kind !== 'deleteRange') return;
    expect(op.deleted).toBe(KEYS);
    expect(op.prevKvs.map((kv) => `${kv.key.toString()}=${kv.value.toString()}`)).toEqual(expected('t'));
  }, 60_000);

  it('leaves every member with the same keys at the same revision', async () => {
    const rev = (await (clients.get(cluster.names()[0] as string) as EtcdClient).put('marker', 'end')).revision;
    for (const [n, c] of clients) {
      // Each member's own view: serializable reads once it has applied the marker.
      for (;;) {
        const r = await c.range('marker', { serializable: true });
        if (r.revision >= rev) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const all = await c.range('\0', { rangeEnd: '\0', serializable: true, countOnly: true });
      expect([n, all.revision, all.count]).toEqual([n, rev, 1]);
    }
  }, 60_000);
});
