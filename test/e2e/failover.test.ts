// Failover and catch-up with real processes: when the leader dies another is elected and writes resume;
// the dead member, restarted, catches up from the leader's log when it missed little, and from a snapshot
// when it missed more than the entries kept behind the leader's last snapshot (and restarts from it).
import { describe, expect, it } from 'vitest';
import { startCluster } from './helpers/cluster.js';
import { expectMemberListOnEveryMember, expectNothingLost } from './helpers/checks.js';
import { waitFor } from '../../src/harness/wait.js';

const INSTALLED = 'installed snapshot from leader';

describe('failover and catch-up', () => {
  it('elects a new leader when the leader dies; writes resume; the old leader catches up from the log', async () => {
    // Snapshots every 20 entries, yet 5000 entries are kept behind each: a short absence is replayed.
    const cluster = await startCluster({ snapshotCount: 20 });
    const writers = cluster.startWriters('failover/log/');
    await writers.waitForAcks(100);
    const old = await cluster.waitForLeader();
    await cluster.kill(old, 'SIGKILL');
    const next = await cluster.waitForNewLeader(old);
    expect(next).not.toBe(old);
    await writers.waitForAcks(100);
    const mark = cluster.logMark(old);
    await cluster.restart(old);
    await writers.waitForAcks(50);
    await cluster.waitCaughtUp(old);
    expect(cluster.logSince(old, mark)).not.toContain(INSTALLED);
    await expectNothingLost(cluster, writers);
  }, 90_000);

  it('when the leader process dies, the survivors elect a new leader at once, not after an election timeout', async () => {
    const cluster = await startCluster();
    const old = await cluster.waitForLeader();
    // The survivors now wait a whole minute before suspecting a silent leader; only noticing the dropped
    // connection lets them elect a new one within the 20 s allowed below.
    for (const name of cluster.names().filter((n) => n !== old)) {
      await cluster.kill(name, 'SIGTERM');
      await cluster.restart(name, { flags: ['--election-timeout', '60000'] });
    }
    expect(await cluster.waitForLeader()).toBe(old);
    const writers = cluster.startWriters('failover/fast/');
    await writers.waitForAcks(20);
    await cluster.kill(old, 'SIGKILL');
    const next = await cluster.waitForNewLeader(old, 20_000);
    expect(next).not.toBe(old);
    await writers.waitForAcks(20);
    expect(cluster.logSince(next, 0)).toContain('connection to the leader lost');
    await cluster.restart(old);
    await cluster.waitCaughtUp(old);
    await expectNothingLost(cluster, writers);
  }, 90_000);

  it('a write that cannot commit fails with "request timed out" at its own deadline, each of several; writes resume with a quorum', async () => {
    // Election timeout 500 ms: a member gives a proposal 5 s + 2 election timeouts = 6 s, as etcd does.
    const cluster = await startCluster();
    const leader = await cluster.waitForLeader();
    const others = cluster.names().filter((n) => n !== leader);
    for (const name of others) await cluster.kill(name, 'SIGKILL');
    // Two writes 1.5 s apart wait on one timer: the second must not fail at the first one's deadline.
    const put = async (key: string, delayMs: number): Promise<{ took: number; stderr: string; code: number | null }> => {
      await new Promise((r) => setTimeout(r, delayMs));
      const t0 = performance.now();
      const r = await cluster.ctl(['put', key, 'v'], [leader]);
      return { took: performance.now() - t0, stderr: r.stderr, code: r.code };
    };
    const [first, second] = await Promise.all([put('timeout/a', 0), put('timeout/b', 1500)]);
    for (const r of [first, second]) {
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('etcdserver: request timed out');
      expect(r.took).toBeGreaterThanOrEqual(6000);
    }
    for (const name of others) await cluster.restart(name);
    await cluster.waitForLeader();
    expect((await cluster.ctl(['put', 'timeout/a', 'after'])).code).toBe(0);
  }, 90_000);

  it('a member that missed more than the kept entries catches up from a snapshot', async () => {
    const keep = 50;
    const cluster = await startCluster({ snapshotCount: 20, flags: ['--experimental-snapshot-catchup-entries', String(keep)] });
    const writers = cluster.startWriters('failover/snapshot/');
    await writers.waitForAcks(50);
    const old = await cluster.waitForLeader();
    await cluster.kill(old, 'SIGKILL');
    await cluster.waitForNewLeader(old);
    // Well past the kept entries and several snapshots: the log the old leader needs is gone.
    await writers.waitForAcks(keep * 6);
    const mark = cluster.logMark(old);
    await cluster.restart(old);
    await waitFor(`${old} to log "${INSTALLED}"`, () => (cluster.logSince(old, mark).includes(INSTALLED) ? true : undefined), { timeoutMs: 60_000 });
    await writers.waitForAcks(50);
    await cluster.waitCaughtUp(old);
    // What it installed is on its disk: killed again, it comes back from there.
    await cluster.kill(old, 'SIGKILL');
    await cluster.restart(old);
    await writers.waitForAcks(50);
    await cluster.waitCaughtUp(old);
    await expectNothingLost(cluster, writers);
    await expectMemberListOnEveryMember(cluster);
  }, 120_000);
});
