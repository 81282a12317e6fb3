// A rolling restart with SIGTERM while a writer writes: each member in turn stops cleanly (a leader first
// hands leadership to a caught-up voter, so no election timeout passes without a leader) and comes back.
// No acknowledged write is lost, the writers are never held up for long, and the members still list each
// other with their names and URLs.
import { describe, expect, it } from 'vitest';
import { startCluster } from './helpers/cluster.js';
import type { E2eCluster } from './helpers/cluster.js';
import { expectMemberListOnEveryMember, expectNothingLost } from './helpers/checks.js';

interface LogLine {
  readonly msg?: string;
  readonly leader?: string;
}

/** The leaders a member's log names after `mark`, in order, from "leader changed" lines. */
function leadersLogged(cluster: E2eCluster, name: string, mark: number): string[] {
  return cluster
    .logged<LogLine>(name, 'leader changed', mark)
    .filter((l) => l.leader !== undefined)
    .map((l) => l.leader as string);
}

describe('rolling restart with SIGTERM', () => {
  it('restarts every member in turn, the leader handing over first; no write lost, no long stall', async () => {
    const cluster = await startCluster();
    const writers = cluster.startWriters('rolling/');
    await writers.waitForAcks(100);
    writers.measureGaps();
    const leader = await cluster.waitForLeader();
    // The leader first, so the hand-over is exercised whatever the others do.
    for (const name of [leader, ...cluster.names().filter((n) => n !== leader)]) {
      const wasLeader = (await cluster.waitForLeader()) === name;
      const mark = cluster.logMark(name);
      const exit = await cluster.stop(name);
      expect(exit, `${name} stopped by SIGTERM`).toEqual({ code: 0, signal: null });
      if (wasLeader) {
        // It saw another member take over before it stopped: leadership was handed over, not lost.
        const self = cluster.hexIdOf(name);
        expect(leadersLogged(cluster, name, mark).filter((l) => l !== self), `${name}'s log after SIGTERM`).not.toEqual([]);
      }
      await writers.waitForAcks(50);
      await cluster.restart(name);
      await writers.waitForAcks(50);
      await cluster.waitCaughtUp(name);
    }
    // Generous for a slow machine, yet far below the 6 s a write waits for a leader that vanished unannounced.
    expect(writers.longestGapMs, `longest stretch without an acknowledged write; ${writers.errors} errors: ${writers.recentErrors.join(' | ')}`).toBeLessThan(5000);
    await expectNothingLost(cluster, writers);
    // Restarts replay the log: each member still knows every other's name and client URLs.
    await expectMemberListOnEveryMember(cluster);
  }, 150_000);

  it('stops every member at once (Ctrl-C on setpoint up) without the leader waiting out its hand-over', async () => {
    // A long election timeout: a leader that waited for a transferee that is stopping too would take two
    // of them (10 s) to give up; one that notices the transferee's connection drop stops at once.
    const cluster = await startCluster({ heartbeatMs: 250, electionMs: 5000 });
    const leader = await cluster.waitForLeader();
    const writers = cluster.startWriters('stop-all/');
    await writers.waitForAcks(20);
    await writers.stop();
    const t0 = performance.now();
    const exits = await Promise.all(cluster.names().map(async (n) => [n, await cluster.kill(n, 'SIGTERM')] as const));
    const ms = performance.now() - t0;
    for (const [n, exit] of exits) expect(exit, `${n} stopped by SIGTERM`).toEqual({ code: 0, signal: null });
    expect(ms, `all three stopped (the leader was ${leader}); log:\n${cluster.logTail(leader, 8)}`).toBeLessThan(5000);
  }, 60_000);
});
