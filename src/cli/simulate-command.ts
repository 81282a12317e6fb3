// `setpoint simulate`: a live simulated three-node cluster in real time — the simulation's cluster (the
// real Raft core, an in-process network, the safety checker) ticked by a timer, with writes and now and
// then a fault. Nothing here touches a disk or a socket.
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { SeededRng } from '../raft/rng.js';
import { SimCluster, type ClusterEvent } from '../sim/cluster.js';
import { Nemesis, type FaultProfile } from '../sim/nemesis.js';
import { ELECTION_TICK, HEARTBEAT_TICK } from '../sim/seed-setup.js';
import { SimViolation } from '../sim/violation.js';
import { Workload } from '../sim/workload.js';

function parsePositive(v: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

// Gentle enough to follow by eye: a fault every half minute or so, each lasting a few seconds.
const DEMO_FAULTS: FaultProfile = {
  partitionRate: 1 / 250,
  partitionTicks: [30, 80],
  partitionShapes: ['primary', 'one'],
  crashRate: 1 / 250,
  tornRate: 0.3,
  crashLeaderBias: 0.6,
  downTicks: [20, 60],
  membershipRate: 0,
  transferRate: 1 / 1500,
};

interface SimulateOptions {
  seed?: number;
  tickMs: number;
  faults: boolean;
}

function simulate(o: SimulateOptions): void {
  const seed = o.seed ?? Date.now() % 1_000_000;
  const rng = new SeededRng(seed);
  const cluster = new SimCluster(
    {
      voters: 3,
      raft: { electionTick: ELECTION_TICK, heartbeatTick: HEARTBEAT_TICK, preVote: true, checkQuorum: true },
      net: { dropRate: 0.005, dupRate: 0, minDelay: 1, maxDelay: 2, longDelayRate: 0, longDelayMax: 0 },
      snapshotEvery: 100,
      keepEntries: 10,
      strictChecks: true,
      traceLines: 60,
    },
    rng.fork(),
  );
  const nemesis = new Nemesis(cluster, DEMO_FAULTS, rng.fork());
  const workload = new Workload(cluster, { proposeRate: 0.3, readRate: 0.1, keys: 5 }, rng.fork());
  const secs = (): string => `${((cluster.now * o.tickMs) / 1000).toFixed(1).padStart(6)}s`;
  let leader = 0n;
  let writes = 0;
  let reads = 0;

  console.log(`setpoint simulate: a live SIMULATED 3-node cluster (seed ${seed}).`);
  console.log('  The real Raft core runs in this process over a simulated network (`setpoint up` runs real members).');
  console.log(`  One tick every ${o.tickMs} ms (election timeout ${ELECTION_TICK}-${2 * ELECTION_TICK} ticks), ~3 writes/s,`);
  console.log(`  ${o.faults ? 'and now and then a node crashes or the leader is partitioned' : 'no faults (--no-faults)'}. Every step is safety-checked.`);
  console.log('  Press Ctrl-C to stop.\n');

  cluster.listener = (e: ClusterEvent): void => {
    switch (e.type) {
      case 'leader':
        console.log(`${secs()}  ${leader === 0n ? `leader elected: node ${e.node}` : `leader changed: node ${leader} -> node ${e.node}`} (term ${e.term})`);
        leader = e.node;
        break;
      case 'ack':
        writes++;
        console.log(`${secs()}  commit #${e.index}  put ${e.write.key}=${e.write.value}  (via node ${e.write.node})`);
        break;
      case 'read':
        reads++;
        break;
      case 'fault':
        console.log(`${secs()}  FAULT ${e.kind}: ${e.text}`);
        break;
      case 'member':
      case 'info':
        console.log(`${secs()}  ${e.text}`);
        break;
    }
  };

  const timer = setInterval(() => {
    try {
      if (o.faults) nemesis.step();
      workload.step();
      cluster.step();
    } catch (err) {
      clearInterval(timer);
      console.log(`\n${secs()}  SAFETY VIOLATION: ${err instanceof SimViolation ? err.message : String(err)}`);
      console.log(cluster.trace.lines().map((l) => `  ${l}`).join('\n'));
      process.exitCode = 1;
    }
  }, o.tickMs);

  const stop = (signal: string): void => {
    clearInterval(timer);
    console.log(`\n${signal}: stopped after ${cluster.now} ticks: ${cluster.checker.elections} elections, ${writes} writes committed, ${reads} linearizable reads checked.`);
    process.exit(process.exitCode ?? 0);
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

export function registerSimulateCommand(program: Command): void {
  program
    .command('simulate')
    .description('watch a live SIMULATED 3-node Raft cluster in real time (elections, commits, faults)')
    .option('--seed <n>', 'seed for the simulated cluster (default: from the clock)', parsePositive)
    .option('--tick-ms <ms>', 'real milliseconds per tick', parsePositive, 100)
    .option('--no-faults', 'do not inject crashes and partitions')
    .action(simulate);
}
