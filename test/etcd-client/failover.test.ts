// The client on a three-member cluster of etcd 3.4 and of Setpoint's store, with members SIGKILLed: calls
// move to the next endpoint, a cluster without a leader is waited out within the call's deadline, and a
// watch whose member dies goes on from another member with every revision exactly once.
import { describe, expect, it } from 'vitest';
import { EtcdClientError } from '../../src/etcd-client/errors.js';
import type { WatchBatch } from '../../src/etcd-client/watch.js';
import { STORE_KINDS, StoreTestCluster } from './helpers/store-cluster.js';

/** Endpoints with member `first` first: a client starts on it. */
function startingAt(cluster: StoreTestCluster, first: number): string[] {
  const all = cluster.endpoints();
  return [...all.slice(first), ...all.slice(0, first)];
}

describe.each(STORE_KINDS)('etcd client failover on %s', (kind) => {
  it('moves to the next endpoint when the member in use dies', async () => {
    const cluster = await StoreTestCluster.start(kind, { size: 3 });
    try {
      const leader = await cluster.leader();
      const c = cluster.client({ endpoints: startingAt(cluster, leader) });
      await c.put('fo/a', '1');
      expect(c.endpoint).toBe(cluster.clientUrl(leader));
      await cluster.kill(leader);
      // A read is asked again of the next members until one answers (after the election). A write sent then
      // to a follower that still forwards to the dead leader may time out: it is not sent twice.
      expect((await c.get('fo/a'))?.value.toString()).toBe('1');
      expect(c.endpoint).not.toBe(cluster.clientUrl(leader));
      expect((await c.put('fo/a', '2')).revision).toBeGreaterThan(0);
      expect((await c.get('fo/a'))?.value.toString()).toBe('2');
    } finally {
      await cluster.stop();
    }
  });

  it('waits out a cluster without a leader within the call deadline, and writes once', async () => {
    const cluster = await StoreTestCluster.start(kind, { size: 3 });
    try {
      const c = cluster.client({ callTimeoutMs: 40_000 });
      await cluster.kill(1);
      await cluster.kill(2);
      const survivor = cluster.client({ endpoints: [cluster.clientUrl(0)], callTimeoutMs: 1500 });
      // The survivor has lost its quorum: it answers "no leader" (or not in time), and the call is held.
      const refused = await survivor.put('nl/x', 'early').then(() => undefined, (e: unknown) => e);
      expect(refused).toBeInstanceOf(EtcdClientError);
      expect(['ETCD_NO_LEADER', 'ETCD_DEADLINE_EXCEEDED', 'ETCD_TIMEOUT']).toContain((refused as EtcdClientError).code);
      const pending = c.put('nl/k', 'v');
      await cluster.restart(1);
      const { revision } = await pending;
      const kv = await c.get('nl/k');
      expect([kv?.value.toString(), kv?.version, kv?.modRevision]).toEqual(['v', 1, revision]);
    } finally {
      await cluster.stop();
    }
  });

  it('resumes a watch on another member after SIGKILL with no gap and no duplicate', async () => {
    const cluster = await StoreTestCluster.start(kind, { size: 3 });
    try {
      const leader = await cluster.leader();
      const watcher = cluster.client({ endpoints: startingAt(cluster, leader) });
      const writer = cluster.client({ endpoints: startingAt(cluster, (leader + 1) % 3) });
      const start = (await writer.put('wf/start', 'x')).revision + 1;
      const w = watcher.watch('wf/', { prefix: true, startRevision: start, prevKv: true });
      const seen: number[] = [];
      const values = new Map<string, string>();
      const consumed = (async () => {
        for await (const b of w as AsyncIterable<WatchBatch>) {
          for (const e of b.events) {
            seen.push(e.kv.modRevision);
            values.set(e.kv.key.toString(), e.kv.value.toString());
          }
        }
      })();
      const acked = new Map<string, string>();
      const ambiguous = new Set<string>();
      let stop = false;
      const writes = (async () => {
        for (let i = 0; !stop; i++) {
          const key = `wf/${i % 50}`;
          try {
            await writer.put(key, String(i));
            acked.set(key, String(i));
            ambiguous.delete(key);
          } catch {
            // An ambiguous write may or may not have landed: the key's last value is unknown until the next ack.
            ambiguous.add(key);
          }
        }
      })();
      const until = async (n: number): Promise<void> => {
        const deadline = Date.now() + 30_000;
        while (seen.length < n) {
          if (Date.now() > deadline) throw new Error(`only ${seen.length} events of ${n}`);
          await new Promise((r) => setTimeout(r, 20));
        }
      };
      await until(100);
      await cluster.kill(leader);
      const after = seen.length;
      await until(after + 200);
      stop = true;
      await writes;
      const head = (await writer.range('wf/', { prefix: true })).revision;
      const deadline = Date.now() + 30_000;
      while (seen.at(-1) !== head && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      w.cancel();
      await consumed;
      // Only the writer writes: the watch saw exactly the revisions start..head, each once, in order.
      expect(seen).toEqual(Array.from({ length: head - start + 1 }, (_, i) => start + i));
      for (const [k, v] of acked) if (!ambiguous.has(k)) expect(values.get(k), k).toBe(v);
      expect(watcher.endpoint).not.toBe(cluster.clientUrl(leader));
    } finally {
      await cluster.stop();
    }
  });
});
