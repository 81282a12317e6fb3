// How long the member's event loop, the one thread that ticks Raft, applies entries and serves clients,
// was kept from running what was due. Three figures on /metrics:
//
// - setpoint_event_loop_delay_seconds (summary): Node's monitorEventLoopDelay at a 10 ms resolution, since
//   the member started: the distribution, each sample short by up to the resolution (a 55 ms stall may read
//   45). A 1 ms timer would take that away and cost an idle member 3.5% of a core in wake-ups here (the
//   member idles at 1.5% without it); the maxima below are the precise figures. It is never reset: Node's
//   reset() drops the sample that spans the reset, which is where a stall right after a scrape would be.
// - setpoint_event_loop_delay_max_seconds (gauge): the largest wall-clock delay since the previous scrape,
//   from this file's own sampler: how late its timer fired, every millisecond while the loop is busy.
// - setpoint_event_loop_held_max_seconds (gauge): the longest the loop was held by the member's own running
//   since the previous scrape. Wall-clock delay also counts the time the OS gave the CPU to other
//   processes, which on a shared machine is most of it (two cores, a dozen runnable processes: a thread
//   runs a quarter of the time), so it cannot tell a member that holds its loop from a member that waits
//   for a CPU. This one counts, for each stretch between two samples, only the time the loop's thread
//   ran in it; the delay is what a client feels, this is what the member did.
import { openSync, readSync } from 'node:fs';
import type { IntervalHistogram } from 'node:perf_hooks';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** monitorEventLoopDelay's timer, in ms. Its samples are the time between firings: the resolution plus the delay. */
const RESOLUTION_MS = 10;
/**
 * The sampler looks every millisecond while the loop is busy, every 10 ms while it mostly waits (a timer
 * every millisecond costs an idle member about 5% of a core here, in wake-ups alone). A stall that begins
 * while it waits is measured short by up to 10 ms in wall-clock time, never in the held figure: a waiting
 * thread does not run, so the stretch's run time is the stall's.
 */
const FINE_MS = 1;
const COARSE_MS = 10;
/**
 * Linux updates a running thread's run time at scheduler ticks (every 1-10 ms, by the kernel's HZ), so a
 * reading can be short by up to one tick: this much is added to each stretch's run time, so that the held
 * figure is never below what the thread ran (it is capped by the stretch's wall-clock length).
 */
const TICK_ALLOWANCE_MS = 10;
const QUANTILES = [0.5, 0.9, 0.99, 0.999] as const;

/** The loop-delay summary since the member started. */
export interface LoopDelaySummary {
  /** Delays in seconds at QUANTILES, and how many samples and their sum. */
  readonly quantiles: readonly (readonly [number, number])[];
  readonly count: number;
  readonly sum: number;
}

/**
 * Reads the loop thread's run time in ns: /proc/thread-self/schedstat (opened from the loop's thread, so it
 * names that thread), or undefined where there is none (not Linux, or scheduler statistics compiled out).
 */
export function threadRunTime(): (() => number) | undefined {
  let fd: number;
  try {
    fd = openSync('/proc/thread-self/schedstat', 'r');
  } catch {
    return undefined;
  }
  const buf = Buffer.allocUnsafe(96);
  const read = (): number => {
    const n = readSync(fd, buf, 0, buf.length, 0);
    const space = buf.indexOf(0x20);
    return Number(buf.toString('latin1', 0, space > 0 && space < n ? space : n));
  };
  // A kernel without scheduler accounting prints zeros: a thread that has been running cannot have run 0 ns.
  return read() > 0 ? read : undefined;
}

/**
 * Samples the loop: for each stretch between two firings of its timer, how late the timer fired (wall
 * clock) and how long the loop's thread ran. The held figure of a stretch is the least of three upper
 * bounds on that thread's running: the stretch's wall-clock length, the whole process's CPU time in it
 * (exact, but other threads count too: garbage collection helpers, storage), and the thread's own run time
 * plus a scheduler tick. Where the thread's run time cannot be read, the process's counts.
 */
class LoopSampler {
  private readonly runTime = threadRunTime();
  private lastWall = performance.now();
  private lastCpu = process.cpuUsage();
  private lastRun: number;
  private period = FINE_MS;
  private heldMax = 0;
  private delayMax = 0;
  private timer: NodeJS.Timeout;

  constructor() {
    this.lastRun = this.runTime?.() ?? 0;
    this.timer = setTimeout(() => this.tick(), this.period).unref();
  }

  private tick(): void {
    const wall = performance.now();
    const cpu = process.cpuUsage();
    const stretch = wall - this.lastWall;
    let held = Math.min(stretch, (cpu.user - this.lastCpu.user + cpu.system - this.lastCpu.system) / 1000);
    if (this.runTime) {
      const run = this.runTime();
      held = Math.min(held, (run - this.lastRun) / 1e6 + TICK_ALLOWANCE_MS);
      this.lastRun = run;
    }
    if (held > this.heldMax) this.heldMax = held;
    const late = stretch - this.period;
    if (late > this.delayMax) this.delayMax = late;
    this.lastWall = wall;
    this.lastCpu = cpu;
    this.period = held > stretch / 2 ? FINE_MS : COARSE_MS;
    this.timer = setTimeout(() => this.tick(), this.period).unref();
  }

  /** The longest held stretch and the largest delay since the previous call, in seconds. */
  take(): { held: number; delay: number } {
    const out = { held: this.heldMax / 1000, delay: this.delayMax / 1000 };
    this.heldMax = 0;
    this.delayMax = 0;
    return out;
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

/** Both samplers. The two maxima are read together and start over at every scrape. */
export class LoopDelayMonitor {
  private readonly eld: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  private readonly sampler = new LoopSampler();
  /** The maxima of the scrape under way, and which of its two readers have had them. */
  private last: { held: number; delay: number } | undefined;
  private readonly readBy = new Set<'held' | 'delay'>();

  constructor() {
    this.eld.enable();
  }

  /**
   * A maximum since the previous scrape. The two gauges read theirs in either order: a reader that already
   * had the current pair takes a new one, the other gets the same.
   */
  max(which: 'held' | 'delay'): number {
    if (!this.last || this.readBy.has(which)) {
      this.last = this.sampler.take();
      this.readBy.clear();
    }
    this.readBy.add(which);
    return this.last[which];
  }

  summary(): LoopDelaySummary {
    const h = this.eld;
    const n = h.count;
    // A sample is the time between two firings of the timer: the delay is what exceeds the resolution.
    const delay = (ns: number): number => (n === 0 ? 0 : Math.max(0, ns / 1e6 - RESOLUTION_MS) / 1000);
    return {
      quantiles: QUANTILES.map((q) => [q, delay(h.percentile(q * 100))] as const),
      count: n,
      sum: n === 0 ? 0 : (Math.max(0, h.mean / 1e6 - RESOLUTION_MS) / 1000) * n,
    };
  }

  stop(): void {
    this.eld.disable();
    this.sampler.stop();
  }
}
