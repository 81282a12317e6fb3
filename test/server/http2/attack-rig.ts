// A real three-member cluster to attack: the leader's client port takes the hostile connection while a
// bystander keeps writing and reading through the same member. After each attack the rig checks that the
// bystander was served throughout without an error, that no election happened (same leader, same term;
// the cluster has etcd's default timing, 100 ms heartbeats and a 1 s election timeout, so a loop held long
// enough to matter costs an election), and how long the member's loop was held (its own running, read
// from its /metrics: embed/loop-delay.ts). Issue 25's 50 ms target for that hold is a performance target,
// checked by `npm run bench:hostile` (these suites with HOSTILE_LOOP_BOUND_MS=50 and a table at the end):
// under `npm test` the suites share two cores with the rest of CI and a 50 ms assertion failed CI by
// chance (62 and 88 ms on attacks that hold 5-20 ms alone). What `npm test` asserts is that the work
// an attack costs is bounded at all: no hold reaches LOOP_BOUND_S, 400 ms, which an unbounded attack
// (a quadratic header merge, an endless CONTINUATION block) passes within seconds.
import { appendFileSync } from 'node:fs';
import type { Etcd3 } from 'etcd3';
import { expect } from 'vitest';
import { startCluster, type E2eCluster } from '../../e2e/helpers/cluster.js';
import { RawH2 } from './raw-h2.js';
import { scrapeLoop } from '../../../src/harness/loop-metrics.js';
import type { LoopFigures } from '../../../src/harness/loop-metrics.js';

/** The bound on how long the member's own running may hold its loop while it is attacked (see above). */
export const LOOP_BOUND_S = Number(process.env.HOSTILE_LOOP_BOUND_MS ?? 400) / 1000;

/**
 * Keeps one line of the bench's table: under `npm run bench:hostile` (HOSTILE_REPORT_FILE set) every
 * attack's figures are appended to that file as a JSON line; otherwise nothing.
 */
export function keepReport(report: { name: string; held: number; wall: number; ms: number }): void {
  const file = process.env.HOSTILE_REPORT_FILE;
  if (file !== undefined) appendFileSync(file, `${JSON.stringify(report)}\n`);
}

export interface AttackReport extends LoopFigures {
  readonly name: string;
  readonly ms: number;
  readonly bystanderCalls: number;
}

/** Puts and gets in turn through one member until stopped; any failure is kept. */
class Bystander {
  calls = 0;
  readonly errors: string[] = [];
  private running = true;
  private readonly loop: Promise<void>;

  constructor(client: Etcd3) {
    this.loop = (async () => {
      for (let i = 0; this.running; i++) {
        try {
          await client.put(`bystander/${i % 16}`).value(String(i));
          const got = await client.get(`bystander/${i % 16}`).string();
          if (got !== String(i)) this.errors.push(`read ${got} after writing ${i}`);
          this.calls += 2;
        } catch (e) {
          this.errors.push((e as Error).message);
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

export class AttackRig {
  readonly reports: AttackReport[] = [];

  private constructor(
    readonly cluster: E2eCluster,
    /** The member attacked: the leader when the rig started (a leader lost to an attack stays the target). */
    readonly target: string,
    readonly url: string,
  ) {}

  /** Starts the cluster (inside a test: it stops when the test ends) with extra `setpoint store` flags. */
  static async start(flags: readonly string[] = []): Promise<AttackRig> {
    const cluster = await startCluster({ size: 3, heartbeatMs: 100, electionMs: 1000, flags });
    const leader = await cluster.waitForLeader();
    return new AttackRig(cluster, leader, cluster.clientUrl(leader));
  }

  /** The leader and term all members agree on now. */
  private async leaderAndTerm(): Promise<{ leader: string; term: string }> {
    const leader = await this.cluster.waitForLeader();
    return { leader: this.cluster.idOf(leader), term: String((await this.cluster.status(leader)).raftTerm) };
  }

  /**
   * Runs one attack against the leader's client port and checks the member's side of it; the attack
   * itself asserts what the offender must have seen (GOAWAY, resets). Failures are soft: every attack of a
   * test runs and reports, and the test fails at its end with all of them.
   */
  async attack(name: string, run: (url: string) => Promise<void>): Promise<AttackReport> {
    const before = await this.leaderAndTerm();
    await scrapeLoop(this.url);
    const bystander = new Bystander(this.cluster.memberClient(this.target));
    const t0 = performance.now();
    let failure: unknown;
    try {
      await run(this.url);
    } catch (e) {
      failure = e;
    } finally {
      RawH2.destroyAll();
      await bystander.stop();
    }
    const ms = performance.now() - t0;
    const loop = await scrapeLoop(this.url);
    const report = { name, ms: Math.round(ms), bystanderCalls: bystander.calls, ...loop };
    this.reports.push(report);
    keepReport(report);
    const outcome = failure === undefined ? 'offender handled' : `OFFENDER NOT HANDLED: ${(failure as Error).message.split('\n')[0]}`;
    console.log(`attack "${name}": ${outcome}; ${report.ms} ms; loop held at most ${(loop.held * 1000).toFixed(1)} ms (wall-clock delay ${(loop.wall * 1000).toFixed(1)} ms); bystander ${bystander.calls} calls, ${bystander.errors.length} errors`);
    expect.soft(failure, `${name}: what the offender saw`).toBeUndefined();
    expect.soft(bystander.errors, `${name}: the bystander's errors`).toEqual([]);
    expect.soft(bystander.calls, `${name}: the bystander was served`).toBeGreaterThan(0);
    expect.soft(loop.held, `${name}: the longest the member's loop was held (s)`).toBeLessThan(LOOP_BOUND_S);
    expect.soft(await this.leaderAndTerm(), `${name}: no election`).toEqual(before);
    return report;
  }
}
