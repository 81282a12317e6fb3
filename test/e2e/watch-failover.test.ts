// A watch across failover with the npm etcd3 client: the member serving the watch stream is made leader
// and killed; the client reconnects to another member and resumes from the revision after the last event
// it saw. Every revision written under the prefix arrives exactly once and in order: no gap, no repeat.
import { describe, expect, it } from 'vitest';
import { startCluster } from './helpers/cluster.js';
import type { E2eCluster } from './helpers/cluster.js';
import { orUndefined, waitFor } from '../../src/harness/wait.js';

/** How many watch streams the member serves, from its /metrics. */
async function watchStreams(cluster: E2eCluster, name: string): Promise<number | undefined> {
  const res = await orUndefined(fetch(`${cluster.clientUrl(name)}/metrics`));
  const text = res?.ok ? await res.text() : undefined;
  const m = text ? /^etcd_debugging_mvcc_watch_stream_total (\d+)$/m.exec(text) : undefined;
  return m?.[1] !== undefined ? Number(m[1]) : undefined;
}

describe('watch across failover', () => {
  it('resumes on another member with no gap when the leader serving it dies', async () => {
    const cluster = await startCluster();
    const start = Number(await waitFor('the head revision', () => cluster.headRevision())) + 1;
    const events: { key: string; value: string; rev: number }[] = [];
    let disconnects = 0;
    const watcher = await cluster.client().watch().prefix('watch/').startRevision(String(start)).create();
    watcher.on('put', (kv) => events.push({ key: kv.key.toString(), value: kv.value.toString(), rev: Number(kv.mod_revision) }));
    watcher.on('disconnected', () => disconnects++);
    const writers = cluster.startWriters('watch/', 2);
    await writers.waitForAcks(50);

    // The member the client chose for its stream becomes the leader, then dies.
    const serving = await waitFor('the member serving the watch', async () => {
      for (const n of cluster.running()) if ((await watchStreams(cluster, n)) === 1) return n;
      return undefined;
    });
    if ((await cluster.waitForLeader()) !== serving) {
      const moved = await cluster.ctl(['move-leader', cluster.hexIdOf(serving)]);
      expect(moved.code, moved.stderr).toBe(0);
      await waitFor(`${serving} to lead`, async () => ((await cluster.leader()) === serving ? true : undefined));
    }
    const seenBefore = events.length;
    await cluster.kill(serving, 'SIGKILL');
    await cluster.waitForNewLeader(serving);
    await writers.waitForAcks(50);
    await waitFor('events after the failover', () => (events.length > seenBefore + 20 ? true : undefined));
    expect(disconnects).toBeGreaterThan(0);
    await cluster.restart(serving);
    await writers.stop();

    const head = Number(await waitFor('the head revision', () => cluster.headRevision()));
    await waitFor(`events up to revision ${head}`, () => (events.at(-1)?.rev === head ? true : undefined), { timeoutMs: 30_000 });
    // Only the writers write, one revision per put: the events must be exactly start..head.
    expect(events.map((e) => e.rev)).toEqual(Array.from({ length: head - start + 1 }, (_, i) => start + i));
    const seen = new Map(events.map((e) => [e.key, e.value]));
    const missing = [...writers.acked].filter(([k, v]) => seen.get(k) !== v);
    expect(missing, 'acknowledged writes the watcher never saw').toEqual([]);
  }, 120_000);
});
