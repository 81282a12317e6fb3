// One seed, start to finish: a fault phase of `steps` ticks with every check running, then the heal,
// recovery and convergence phases. The seed decides everything, so a result can always be replayed.
import { SeededRng } from '../raft/rng.js';
import { SimCluster, type NetCounters } from './cluster.js';
import { awaitConvergence, awaitRecovery } from './liveness.js';
import { Nemesis } from './nemesis.js';
import { CALM_NET } from './network.js';
import { ELECTION_TICK, setupForSeed, type PlantedBugName } from './seed-setup.js';
import type { ViolationKind } from './violation.js';
import { seedOutcome } from './seed-outcome.js';
import { Workload } from './workload.js';
import type { PlantedLoopBug } from '../server/member/planted-bugs.js';

export const DEFAULT_STEPS = 600;
/**
 * Recovery bound, 30 election timeouts. One election needs a randomized timeout (< 2 * electionTick) and
 * a few message delays; measured over seeds 1-30000 (3 voters) and 1-8000 (5 voters): median 8 ticks,
 * p99 ~75, p99.9 ~130, max 257. The slowest seeds are election churn without pre-vote: candidates with
 * stale logs keep raising the term, which resets the up-to-date node's timer (as in etcd), while a
 * removed member still counts in the configuration the others know. A stall, or recovery well beyond
 * that tail, fails; the tail itself does not.
 */
export const RECOVER_BOUND = 30 * ELECTION_TICK;
/** Catching up once quiet is a few round trips plus perhaps a snapshot: max 55 ticks over seeds 1-2000. */
export const CONVERGE_BOUND = 20 * ELECTION_TICK;

export interface SimOptions {
  readonly seed: number;
  /** Initial voters. */
  readonly nodes: number;
  /** Ticks of the fault phase. */
  readonly steps: number;
  readonly bug?: PlantedBugName;
  /** Also check vote stability and current-term commits directly (default true). */
  readonly strict?: boolean;
  readonly recoverBound?: number;
  readonly traceLines?: number;
  /** Node ids near 2^64 (seed-setup.ts WIDE_ID_BASE) instead of 1, 2, 3…. */
  readonly wideIds?: boolean;
  /** Run the member's own loop (member-loop/run-member-seed.ts) instead of the core alone. */
  readonly memberLoop?: boolean;
  /** TEST ONLY, with memberLoop: a bug planted in the member's loop (server/member/planted-bugs.ts). */
  readonly loopBug?: PlantedLoopBug;
}

export interface SeedStats {
  readonly ticks: number;
  readonly elections: number;
  readonly commits: number;
  readonly writesAcked: number;
  readonly readsChecked: number;
  readonly faults: ReadonlyMap<string, number>;
  readonly messages: NetCounters;
  /** Ticks from the heal to the first acknowledged fresh proposal; -1 if the run did not get there. */
  readonly recoverTicks: number;
  readonly convergeTicks: number;
  /** Member-loop mode: leases granted, and revoked by the leader's expiry sweep through Raft. */
  readonly leasesGranted?: number;
  readonly leasesRevoked?: number;
}

export interface SeedViolation {
  readonly kind: ViolationKind;
  readonly message: string;
  readonly tick: number;
  /** The last events before the violation, oldest first. */
  readonly trace: readonly string[];
}

export interface SeedResult {
  readonly options: SimOptions;
  readonly violation?: SeedViolation;
  /** Hash of every event of the run: equal for two runs of one seed, or the simulation is not deterministic. */
  readonly traceHash: number;
  readonly stats: SeedStats;
}

export function replayCommand(o: SimOptions): string {
  const bug = o.bug !== undefined ? ` --bug ${o.bug}` : '';
  const classic = o.strict === false ? ' --classic-checks' : '';
  const wide = o.wideIds === true ? ' --wide-ids' : '';
  const loop = o.memberLoop === true ? ' --member-loop' : '';
  const loopBug = o.loopBug !== undefined ? ` --loop-bug ${o.loopBug}` : '';
  return `npm run sim -- --seeds ${o.seed}-${o.seed} --nodes ${o.nodes} --steps ${o.steps}${bug}${classic}${wide}${loop}${loopBug}`;
}

/**
 * Runs one seed. The core signals out-of-range log lookups with exceptions on hot paths, and capturing
 * their stacks costs about a third of a run, so stacks are off while the seed runs; a seed that fails
 * with an unexpected error is run again, identically, with stacks on for the report.
 */
export function runSeed(o: SimOptions): SeedResult {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  let r: SeedResult;
  try {
    r = runSeedOnce(o);
  } finally {
    Error.stackTraceLimit = limit;
  }
  return r.violation?.kind === 'core-error' ? runSeedOnce(o) : r;
}

function runSeedOnce(o: SimOptions): SeedResult {
  const rng = new SeededRng(o.seed);
  const setup = setupForSeed(rng.fork(), {
    nodes: o.nodes,
    strict: o.strict ?? true,
    traceLines: o.traceLines ?? 60,
    ...(o.bug !== undefined ? { bug: o.bug } : {}),
    ...(o.wideIds === true ? { wideIds: true } : {}),
  });
  const cluster = new SimCluster(setup.cluster, rng.fork());
  const nemesis = new Nemesis(cluster, setup.faults, rng.fork());
  const workload = new Workload(cluster, setup.workload, rng.fork());
  const r = setup.cluster.raft;
  cluster.note(
    `seed ${o.seed}: ${o.nodes} voters, preVote=${String(r.preVote)} checkQuorum=${String(r.checkQuorum)} maxSizePerMsg=${r.maxSizePerMsg ?? '-'} ` +
      `maxInflight=${r.maxInflightMsgs ?? '-'} snapshotEvery=${setup.cluster.snapshotEvery} drop=${setup.cluster.net.dropRate.toFixed(3)}`,
  );
  let recoverTicks = -1;
  let convergeTicks = -1;
  let error: unknown;
  try {
    for (let t = 0; t < o.steps; t++) {
      nemesis.step();
      workload.step();
      cluster.step();
    }
    nemesis.healAll();
    cluster.net.faults = CALM_NET;
    recoverTicks = awaitRecovery(cluster, o.recoverBound ?? RECOVER_BOUND);
    convergeTicks = awaitConvergence(cluster, CONVERGE_BOUND);
  } catch (e) {
    error = e ?? new Error('undefined thrown');
  }
  return seedOutcome(o, cluster, error, recoverTicks, convergeTicks);
}
