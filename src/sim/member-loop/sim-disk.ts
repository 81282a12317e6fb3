// A member's simulated disk for the Raft log: what the process has written is visible at once (the page
// cache), and becomes durable only when the write's fsync completes, at a time the seed decides. A crash
// keeps exactly what was durable: the rebuilt storage replays the durable writes onto the bootstrap state.
import type { Rng } from '../../raft/rng.js';
import type { MemoryStorage } from '../../raft/storage.js';
import { bootstrapStorage } from '../../raft/storage.js';
import type { NodeId, Ready } from '../../raft/types.js';
import type { SimScheduler, SimTimers } from './sim-scheduler.js';

type Write = (s: MemoryStorage) => void;

export interface DiskTiming {
  /** An fsync takes a uniform time in [min, max] simulated milliseconds. */
  readonly fsyncMinMs: number;
  readonly fsyncMaxMs: number;
}

export class SimDisk {
  /** What the running process reads and writes. */
  live: MemoryStorage;
  /** Exactly what survives a crash, kept as a second storage written in the same order. */
  durable: MemoryStorage;
  private readonly durableWrites: Write[] = [];
  /** Written but not yet fsync'd, oldest first. */
  private pending: Write[] = [];

  constructor(
    private readonly voters: readonly NodeId[],
    private readonly sched: SimScheduler,
    private readonly rng: Rng,
    private readonly timing: DiskTiming,
  ) {
    this.live = bootstrapStorage(voters);
    this.durable = bootstrapStorage(voters);
  }

  /**
   * Writes a Ready's snapshot, entries and hard state. With mustSync, resolves once they are durable (the
   * fsync, together with everything written before); otherwise at once, durable with the next fsync.
   */
  save(rd: Ready, timers: SimTimers): Promise<void> {
    const w: Write = (s) => {
      if (rd.snapshot) s.applySnapshot(rd.snapshot);
      s.append(rd.entries);
      if (rd.hardState) s.setHardState(rd.hardState);
    };
    w(this.live);
    this.pending.push(w);
    if (!rd.mustSync) return Promise.resolve();
    const t = this.timing;
    const took = t.fsyncMinMs + this.rng.int(t.fsyncMaxMs - t.fsyncMinMs + 1);
    return new Promise((resolve) => {
      timers.setTimeout(() => {
        const upTo = this.pending.indexOf(w);
        for (const done of this.pending.splice(0, upTo + 1)) {
          done(this.durable);
          this.durableWrites.push(done);
        }
        resolve();
      }, took);
    });
  }

  /** The process died: whatever was not fsync'd is gone. */
  crash(): void {
    this.pending = [];
    const s = bootstrapStorage(this.voters);
    for (const w of this.durableWrites) w(s);
    this.live = s;
  }
}
