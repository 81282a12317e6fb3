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

/** pino's lines carry their time (ms since the epoch). */
interface TimedLine {
  readonly msg?: string;
  readonly time: number;
}

/** The leaders a member's log names after `mark`, in order, from "leader changed" lines. */
function leadersLogged(cluster: E2eCluster, name: string, mark: number): string[] {
  return cluster
    .logged<LogLine>(name, 'leader changed', mark)
    .filter((l) => l.leader !== undefined)
    .map((l) => l.leader as string);
}

describe('rolling restart with SIGTERM', () => {
  it('restarts every member in turn, the leader handing over first; no write lost, no election but the hand-overs', async () => {
    // Elections only by hand-over: an election timeout six times the default e2e one, so a busy machine
    // does not call one of its own, while a hand-over moves leadership at once whatever the timeout.
    const cluster = await startCluster({ heartbeatMs: 100, electionMs: 3000 });
    const writers = cluster.startWriters('rolling/');
    await writers.waitForAcks(100);
    writers.measureGaps();
    const leader = await cluster.waitForLeader();
    const termOf = async (): Promise<bigint> => (await cluster.status(await cluster.waitForLeader())).raftTerm;
    let term = await termOf();
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
      // One election per hand-over (the transferee's), none when a follower went and came back: nobody
      // waited out an election timeout, and no restarted member disrupted the leader (pre-vote).
      const now = await termOf();
      expect(now, `the term after ${name} (${wasLeader ? 'the leader' : 'a follower'}) restarted; errors seen: ${JSON.stringify([...writers.errorCounts])}`).toBe(term + (wasLeader ? 1n : 0n));
      term = now;
    }
    // How long the writers went without an acknowledgement is a timing: printed here, not bounded.
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
    const mark = cluster.logMark(leader);
    const exits = await Promise.all(cluster.names().map(async (n) => [n, await cluster.kill(n, 'SIGTERM')] as const));
    for (const [n, exit] of exits) expect(exit, `${n} stopped by SIGTERM`).toEqual({ code: 0, signal: null });
    // Timed by the leader itself, from its log (the time between SIGTERM and its last line), not by this
    // process: waiting out the hand-over takes two election timeouts by its own timer; giving it up when
    // the transferee's connection drops takes a moment.
    const [stopping] = cluster.logged<TimedLine>(leader, 'stopping', mark);
    const [stopped] = cluster.logged<TimedLine>(leader, 'member stopped', mark);
    expect(stopping && stopped, `the leader's stop in its log:\n${cluster.logTail(leader, 8)}`).toBeTruthy();
    const took = (stopped?.time ?? 0) - (stopping?.time ?? 0);
    console.log(`the leader (${leader}) took ${took} ms from SIGTERM to stopped`);
    expect(took, `the leader (${leader}) waited out its hand-over; log:\n${cluster.logTail(leader, 8)}`).toBeLessThan(2 * 5000);
  }, 60_000);
});
