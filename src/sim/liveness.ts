// The recovery phase: once every fault has stopped, a leader must emerge and commit a fresh proposal,
// and then every member must catch up to the same state, each within a bound of simulated ticks. The
// checks poll between ticks, so the core-only cluster (synchronous) and the member-loop cluster
// (asynchronous, member-loop/) run the same ones.
import type { NodeId } from '../raft/types.js';
import type { SimCluster } from './cluster.js';
import { SimViolation } from './violation.js';

/** A member as the convergence check reads it. */
export interface MemberView {
  readonly id: NodeId;
  readonly up: boolean;
  readonly commit: number;
  readonly lastIndex: number;
  readonly applied: number;
  digest(): number;
  /** One line for a report: role, term, commit, applied, last index. */
  describe(): string;
}

/** What the recovery and convergence checks need of a cluster. */
export interface LivenessTarget {
  readonly now: number;
  readonly cfg: { readonly raft: { readonly electionTick: number } };
  readonly clients: { isPending(id: number): boolean };
  propose(id: NodeId, key: string): { readonly id: number } | undefined;
  leaderView(): MemberView | undefined;
  memberViews(): MemberView[];
}

/**
 * Ticks until a proposal made after the heal is acknowledged; clients are quiet meanwhile, so this
 * measures elections plus replicating whatever backlog the fault phase left. poll() before every tick:
 * the ticks taken once done, undefined while waiting; it throws past `bound`.
 */
abstract class Probe {
  protected readonly start: number;

  constructor(
    protected readonly cluster: LivenessTarget,
    protected readonly bound: number,
  ) {
    this.start = cluster.now;
  }

  abstract poll(): number | undefined;
}

export class RecoveryProbe extends Probe {
  private readonly probes: number[] = [];
  private lastLeader: NodeId | undefined;
  private lastProbe = -Infinity;

  override poll(): number | undefined {
    const cluster = this.cluster;
    if (this.probes.some((id) => !cluster.clients.isPending(id))) return cluster.now - this.start;
    if (cluster.now - this.start >= this.bound) {
      throw new SimViolation('liveness', `no fresh proposal committed within ${this.bound} ticks after the faults stopped (${describeNodes(cluster)})`);
    }
    const l = cluster.leaderView();
    // Re-propose through each new leader, and now and then in case the proposal was lost on the way.
    if (l !== undefined && (l.id !== this.lastLeader || cluster.now - this.lastProbe >= cluster.cfg.raft.electionTick)) {
      const w = cluster.propose(l.id, 'probe');
      if (w !== undefined) this.probes.push(w.id);
      this.lastLeader = l.id;
      this.lastProbe = cluster.now;
    }
    return undefined;
  }
}

/** With traffic stopped, every member must apply the leader's whole log, and then their states must agree. */
export class ConvergenceProbe extends Probe {
  override poll(): number | undefined {
    const cluster = this.cluster;
    const l = cluster.leaderView();
    if (l !== undefined) {
      const members = cluster.memberViews();
      if (l.commit === l.lastIndex && members.every((n) => n.up && n.applied === l.commit)) {
        const digest = l.digest();
        const odd = members.find((n) => n.digest() !== digest);
        if (odd !== undefined) {
          throw new SimViolation('convergence', `node ${odd.id} and leader ${l.id} both applied up to ${l.commit} but hold different key-value states`);
        }
        return cluster.now - this.start;
      }
    }
    if (cluster.now - this.start >= this.bound) {
      throw new SimViolation('convergence', `members did not all apply the leader's log within ${this.bound} ticks of quiet (${describeNodes(cluster)})`);
    }
    return undefined;
  }
}

export function awaitRecovery(cluster: SimCluster, bound: number): number {
  return stepUntil(cluster, new RecoveryProbe(cluster, bound));
}

export function awaitConvergence(cluster: SimCluster, bound: number): number {
  return stepUntil(cluster, new ConvergenceProbe(cluster, bound));
}

function stepUntil(cluster: SimCluster, probe: Probe): number {
  for (;;) {
    const t = probe.poll();
    if (t !== undefined) return t;
    cluster.step();
  }
}

function describeNodes(cluster: LivenessTarget): string {
  return cluster
    .memberViews()
    .map((n) => n.describe())
    .join('; ');
}
