// A clock that moves only when told to: tests of the queue's backoff, the event correlator and the
// leader elector advance it step by step and see exactly which timers fire.
import type { Clock, Timer } from './clock.js';

interface Pending {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
  cancelled: boolean;
}

export class ManualClock implements Clock {
  private t: number;
  private readonly wallStart: number;
  private seq = 0;
  private pending: Pending[] = [];

  constructor(start = 0, wallStart = Date.UTC(2026, 0, 1)) {
    this.t = start;
    this.wallStart = wallStart;
  }

  now(): number {
    return this.t;
  }

  wallNow(): Date {
    return new Date(this.wallStart + this.t);
  }

  setTimer(fn: () => void, ms: number): Timer {
    const p: Pending = { at: this.t + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.pending.push(p);
    return { cancel: () => void (p.cancelled = true) };
  }

  /** Timers not yet fired or cancelled. */
  timers(): number {
    return this.pending.filter((p) => !p.cancelled).length;
  }

  /** Moves time forward by ms, firing due timers in order (timers they set that fall due fire too). */
  advance(ms: number): void {
    const until = this.t + ms;
    for (;;) {
      this.pending = this.pending.filter((p) => !p.cancelled);
      let next: Pending | undefined;
      for (const p of this.pending) if (p.at <= until && (!next || p.at < next.at || (p.at === next.at && p.seq < next.seq))) next = p;
      if (!next) break;
      this.t = Math.max(this.t, next.at);
      next.cancelled = true;
      next.fn();
    }
    this.t = until;
  }
}
