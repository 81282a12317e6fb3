// The simulated network: per-message delay, drop and duplication, and a set of cut links that the
// nemesis uses to build partitions. Links are directed, so one-way cuts are possible.
import type { Rng } from '../raft/rng.js';
import type { NodeId } from '../raft/types.js';

export interface NetFaults {
  /** Chance that a message is lost. */
  readonly dropRate: number;
  /** Chance that a message is delivered twice (each copy with its own delay). */
  readonly dupRate: number;
  /** Usual delay in ticks, uniform in [minDelay, maxDelay]; messages between two nodes get reordered. */
  readonly minDelay: number;
  readonly maxDelay: number;
  /** Chance of a long delay, uniform up to longDelayMax: stale messages that arrive after leadership moved. */
  readonly longDelayRate: number;
  readonly longDelayMax: number;
}

export const CALM_NET: NetFaults = { dropRate: 0, dupRate: 0, minDelay: 1, maxDelay: 2, longDelayRate: 0, longDelayMax: 0 };

export class SimNetwork {
  faults: NetFaults;
  private readonly rng: Rng;
  /** Cut links: sender → the receivers it cannot reach. */
  private readonly cut = new Map<NodeId, Set<NodeId>>();

  constructor(rng: Rng, faults: NetFaults) {
    this.rng = rng;
    this.faults = faults;
  }

  isCut(from: NodeId, to: NodeId): boolean {
    return this.cut.size > 0 && this.cut.get(from)?.has(to) === true;
  }

  get partitioned(): boolean {
    return this.cut.size > 0;
  }

  cutLink(from: NodeId, to: NodeId): void {
    let cutTo = this.cut.get(from);
    if (cutTo === undefined) this.cut.set(from, (cutTo = new Set()));
    cutTo.add(to);
  }

  /** Cuts every link between the groups; nodes in no group keep all their links. */
  split(groups: readonly (readonly NodeId[])[]): void {
    for (let i = 0; i < groups.length; i++) {
      for (let j = 0; j < groups.length; j++) {
        if (i === j) continue;
        for (const a of groups[i] ?? []) for (const b of groups[j] ?? []) this.cutLink(a, b);
      }
    }
  }

  heal(): void {
    this.cut.clear();
  }

  /** The delays of the copies of one message: empty when it is dropped, two entries when duplicated. */
  plan(): number[] {
    const f = this.faults;
    if (f.dropRate > 0 && this.rng.float() < f.dropRate) return [];
    const copies = f.dupRate > 0 && this.rng.float() < f.dupRate ? 2 : 1;
    const out: number[] = [];
    for (let c = 0; c < copies; c++) {
      if (f.longDelayRate > 0 && this.rng.float() < f.longDelayRate) out.push(1 + this.rng.int(f.longDelayMax));
      else out.push(f.minDelay + this.rng.int(f.maxDelay - f.minDelay + 1));
    }
    return out;
  }
}
