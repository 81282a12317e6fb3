// Everything a seed decides before the run starts: the core's knobs (pre-vote, check-quorum, message
// and inflight limits, snapshot frequency) and how hard each fault and the client traffic hit. Every
// fault type is on in every seed; only the intensities vary, so a range of seeds covers gentle and
// brutal runs alike.
import type { Rng } from '../raft/rng.js';
import type { ClusterConfig } from './cluster.js';
import { PARTITION_SHAPES, type FaultProfile } from './nemesis.js';
import type { NetFaults } from './network.js';
import { pick } from './random.js';
import type { WorkloadProfile } from './workload.js';

export const PLANTED_BUGS = ['voteTwice', 'commitPreviousTermByCounting', 'readWithoutQuorum'] as const;
export type PlantedBugName = (typeof PLANTED_BUGS)[number];

export const ELECTION_TICK = 10;
/**
 * Node ids for --wide-ids: 2^64 - 1024 + 1, + 2, … As Numbers they are all one value (doubles near 2^64
 * are 4096 apart), so a core that let an id pass through a Number would mistake one member for another.
 */
export const WIDE_ID_BASE = 2n ** 64n - 1024n;
export const HEARTBEAT_TICK = 1;

export interface SeedSetup {
  readonly cluster: ClusterConfig;
  readonly faults: FaultProfile;
  readonly workload: WorkloadProfile;
}

export interface SetupOptions {
  readonly nodes: number;
  readonly bug?: PlantedBugName;
  readonly strict: boolean;
  readonly traceLines: number;
  /** Ids from WIDE_ID_BASE + 1 instead of 1. */
  readonly wideIds?: boolean;
}

export function setupForSeed(rng: Rng, o: SetupOptions): SeedSetup {
  const range = (lo: number, hi: number): number => lo + rng.float() * (hi - lo);
  const one = <T>(xs: readonly T[]): T => pick(rng, xs) as T;
  const net: NetFaults = {
    dropRate: range(0.01, 0.1),
    dupRate: range(0.005, 0.05),
    minDelay: 1,
    maxDelay: one([1, 2, 3, 4]),
    longDelayRate: range(0.002, 0.02),
    longDelayMax: 3 * ELECTION_TICK,
  };
  const maxSizePerMsg = one([1, 200, 1 << 20]);
  const cluster: ClusterConfig = {
    voters: o.nodes,
    ...(o.wideIds === true ? { idBase: WIDE_ID_BASE } : {}),
    raft: {
      electionTick: ELECTION_TICK,
      heartbeatTick: HEARTBEAT_TICK,
      checkQuorum: rng.float() < 0.5,
      preVote: rng.float() < 0.5,
      // 1 byte means one entry per append message: old-term entries then reach followers one by one.
      // Such seeds pipeline deeply, or replication falls behind the client traffic for good.
      maxSizePerMsg,
      maxInflightMsgs: maxSizePerMsg === 1 ? 256 : one([4, 256]),
      // Proposals are refused while this leader's uncommitted tail is this large (0: unlimited).
      maxUncommittedEntriesSize: one([0, 4096]),
      ...(o.bug !== undefined ? { bugs: { [o.bug]: true } } : {}),
    },
    net,
    snapshotEvery: one([0, 5, 10, 30]),
    keepEntries: rng.int(4),
    strictChecks: o.strict,
    traceLines: o.traceLines,
  };
  const faults: FaultProfile = {
    partitionRate: range(0.01, 0.05),
    partitionTicks: [5, 8 * ELECTION_TICK],
    partitionShapes: PARTITION_SHAPES,
    crashRate: range(0.003, 0.015),
    tornRate: 0.5,
    crashLeaderBias: 0.4,
    downTicks: [1, 6 * ELECTION_TICK],
    membershipRate: range(0.005, 0.02),
    transferRate: range(0.003, 0.013),
  };
  const workload: WorkloadProfile = { proposeRate: range(0.3, 1.5), readRate: range(0.2, 1), keys: 3 + rng.int(5) };
  return { cluster, faults, workload };
}
