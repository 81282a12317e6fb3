// One seed of the member-loop simulation, start to finish: the seed's faults and traffic for `steps`
// ticks with every check running, then the heal, a fresh write that must be acknowledged, and every
// member applying the same log to the same state. As in run-seed.ts, the seed decides everything.
import { SeededRng } from '../../raft/rng.js';
import { Nemesis } from '../nemesis.js';
import { CALM_NET } from '../network.js';
import { CONVERGE_BOUND, RECOVER_BOUND, type SeedResult, type SimOptions } from '../run-seed.js';
import { seedOutcome } from '../seed-outcome.js';
import { setupForSeed } from '../seed-setup.js';
import { ConvergenceProbe, RecoveryProbe } from '../liveness.js';
import { Workload } from '../workload.js';
import { MemberCluster } from './member-cluster.js';

export async function runMemberSeed(o: SimOptions): Promise<SeedResult> {
  const rng = new SeededRng(o.seed);
  const setup = setupForSeed(rng.fork(), { nodes: o.nodes, strict: o.strict ?? true, traceLines: o.traceLines ?? 60 });
  const diskRng = rng.fork();
  const fsyncMinMs = 1 + diskRng.int(5);
  const cluster = new MemberCluster(
    {
      voters: o.nodes,
      raft: setup.cluster.raft,
      net: setup.cluster.net,
      disk: { fsyncMinMs, fsyncMaxMs: fsyncMinMs + 5 + diskRng.int(60) },
      msPerDelayTick: 10 + diskRng.int(30),
      strictChecks: setup.cluster.strictChecks,
      traceLines: setup.cluster.traceLines,
      ...(o.loopBug !== undefined ? { plantedBug: o.loopBug } : {}),
    },
    rng.fork(),
  );
  // Membership changes need the snapshot hand-off, which this simulation does not model yet.
  const nemesis = new Nemesis(cluster, { ...setup.faults, membershipRate: 0 }, rng.fork());
  const workload = new Workload(cluster, setup.workload, rng.fork());
  const r = setup.cluster.raft;
  cluster.note(`seed ${o.seed} (member loop): ${o.nodes} voters, preVote=${String(r.preVote)} checkQuorum=${String(r.checkQuorum)} drop=${setup.cluster.net.dropRate.toFixed(3)} fsync ${cluster.cfg.disk.fsyncMinMs}-${cluster.cfg.disk.fsyncMaxMs} ms`);
  let recoverTicks = -1;
  let convergeTicks = -1;
  let error: unknown;
  try {
    for (let t = 0; t < o.steps; t++) {
      nemesis.step();
      workload.step();
      cluster.leases.step();
      await cluster.step();
    }
    nemesis.healAll();
    cluster.net.faults = CALM_NET;
    recoverTicks = await awaitProbe(cluster, new RecoveryProbe(cluster, o.recoverBound ?? RECOVER_BOUND));
    convergeTicks = await awaitProbe(cluster, new ConvergenceProbe(cluster, CONVERGE_BOUND));
  } catch (e) {
    error = e ?? new Error('undefined thrown');
  }
  return seedOutcome(o, cluster, error, recoverTicks, convergeTicks);
}

/** run-seed.ts's recovery and convergence checks, polled between the asynchronous ticks. */
async function awaitProbe(cluster: MemberCluster, probe: RecoveryProbe | ConvergenceProbe): Promise<number> {
  for (;;) {
    const t = probe.poll();
    if (t !== undefined) return t;
    await cluster.step();
  }
}
