// Client traffic: puts and ReadIndex reads on a handful of keys, sent to random running members
// (followers forward to the leader), at seeded rates.
import type { Rng } from '../raft/rng.js';
import type { SimCluster } from './cluster.js';
import { countFor, pick } from './random.js';

export interface WorkloadProfile {
  /** Mean operations per tick. */
  readonly proposeRate: number;
  readonly readRate: number;
  /** Few keys, so reads and writes collide. */
  readonly keys: number;
}

export class Workload {
  private readonly cluster: SimCluster;
  private readonly profile: WorkloadProfile;
  private readonly rng: Rng;

  constructor(cluster: SimCluster, profile: WorkloadProfile, rng: Rng) {
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
