// Virtual time for the member-loop simulation: every timer, immediate, message delivery and fsync of
// every member sits in one queue ordered by (time, insertion), and between two of them the promises the
// member code awaits are left to settle. Nothing waits on the real clock, so a run is a function of its seed.
import type { MemberClock, TimerHandle } from '../../server/member/member-clock.js';
import { EventQueue } from '../event-queue.js';

interface Task {
  readonly at: number;
  readonly fn: () => void;
  readonly owner: SimTimers | undefined;
  cancelled: boolean;
}

/** 2026-01-01T00:00:00Z: where the simulation's wall clock starts. */
const SIM_EPOCH_MS = 1_767_225_600_000;

/** Lets every queued microtask run: promise chains settle before Node's next immediate. */
const settleMicrotasks = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class SimScheduler {
  /** Simulated milliseconds. */
  now = 0;
  private readonly queue = new EventQueue<Task>();
  private immediates: Task[] = [];

  at(ms: number, fn: () => void, owner?: SimTimers): Task {
    const t: Task = { at: Math.max(ms, this.now), fn, owner, cancelled: false };
    this.queue.push(t.at, t);
    return t;
  }

  immediate(fn: () => void, owner?: SimTimers): void {
    this.immediates.push({ at: this.now, fn, owner, cancelled: false });
  }

  /** Runs what is due up to `until` in order, settling promises after each, then sets the time to `until`. */
  async runUntil(until: number, afterEach: () => void): Promise<void> {
    await this.settle(afterEach);
    while (this.queue.nextAt() <= until) {
      const t = this.queue.pop() as Task;
      this.now = t.at;
      if (live(t)) t.fn();
      await this.settle(afterEach);
    }
    this.now = until;
  }

  /** Settles promises and runs immediates (each batch in order) until neither is left. */
  async settle(afterEach: () => void): Promise<void> {
    for (;;) {
      await settleMicrotasks();
      afterEach();
      if (this.immediates.length === 0) return;
      for (const t of this.immediates.splice(0)) if (live(t)) t.fn();
    }
  }
}

function live(t: Task): boolean {
  return !t.cancelled && (t.owner === undefined || t.owner.alive);
}

/** One member process's clock: its timers die with it, as a crashed process's do. */
export class SimTimers implements MemberClock {
  alive = true;

  constructor(private readonly sched: SimScheduler) {}

  now(): number {
    return this.sched.now;
  }

  /** Simulated time from a fixed date: restarts of a member are at least a tick apart, so they differ. */
  epochMs(): number {
    return SIM_EPOCH_MS + this.sched.now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    return this.sched.at(this.sched.now + Math.max(0, ms), fn, this);
  }

  clearTimeout(h: TimerHandle): void {
    if (h !== undefined && h !== null) (h as Task).cancelled = true;
  }

  setImmediate(fn: () => void): void {
    this.sched.immediate(fn, this);
  }

  /** The process died: nothing it scheduled runs. */
  dispose(): void {
    this.alive = false;
  }
}
