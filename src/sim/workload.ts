// Client traffic: puts and ReadIndex reads on a handful of keys, sent to random running members
// (followers forward to the leader), at seeded rates.
import type { Rng } from '../raft/rng.js';
import type { NodeId } from '../raft/types.js';
import { countFor, pick } from './random.js';

export interface WorkloadProfile {
  /** Mean operations per tick. */
  readonly proposeRate: number;
  readonly readRate: number;
  /** Few keys, so reads and writes collide. */
  readonly keys: number;
}

/** What the workload sends requests to: the core-only SimCluster, or the member-loop cluster. */
export interface WorkloadTarget {
  upNodes(): readonly { readonly id: NodeId }[];
  propose(id: NodeId, key: string): unknown;
  read(id: NodeId, key: string): unknown;
}

export class Workload {
  private readonly cluster: WorkloadTarget;
  private readonly profile: WorkloadProfile;
  private readonly rng: Rng;

  constructor(cluster: WorkloadTarget, profile: WorkloadProfile, rng: Rng) {
    this.cluster = cluster;
    this.profile = profile;
    this.rng = rng;
  }

  step(): void {
    const c = this.cluster;
    const up = c.upNodes();
    for (let i = countFor(this.rng, this.profile.proposeRate); i > 0; i--) {
      const n = pick(this.rng, up);
      if (n !== undefined) c.propose(n.id, this.key());
    }
    for (let i = countFor(this.rng, this.profile.readRate); i > 0; i--) {
      const n = pick(this.rng, up);
      if (n !== undefined) c.read(n.id, this.key());
    }
  }

  private key(): string {
    return `k${this.rng.int(this.profile.keys)}`;
  }
}
