// How long the member's event loop, the one thread that ticks Raft, applies entries and serves clients,
// was kept from running what was due. Three figures on /metrics:
//
// - setpoint_event_loop_delay_seconds (summary) and setpoint_event_loop_delay_max_seconds (gauge): Node's
//   monitorEventLoopDelay at a 1 ms resolution, in wall-clock time, since the previous scrape. A coarser
//   resolution hides up to its own length in every sample (a 10 ms timer reads a 55 ms stall as 45).
// - setpoint_event_loop_held_max_seconds (gauge): the longest the loop was held by the member's own
//   running since the previous scrape. Wall-clock delay also counts the time the OS gave the CPU to other
//   processes, which on a shared machine is most of it (two cores, a dozen runnable processes: a thread
//   runs a quarter of the time), so it cannot tell a member that holds its loop from a member that waits
//   for a CPU. This one counts, for each stretch between two samples, only the time the loop's thread
//   ran in it; the first figures are what a client feels, this one is what the member did.
import { openSync, readSync } from 'node:fs';
import type { IntervalHistogram } from 'node:perf_hooks';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** monitorEventLoopDelay's timer, in ms. Its samples are the time between firings: the resolution plus the delay. */
const RESOLUTION_MS = 1;
/** The held sampler looks every millisecond while the loop is busy, every 10 ms while it mostly waits. */
const FINE_MS = 1;
const COARSE_MS = 10;
/**
 * Linux updates a running thread's run time at scheduler ticks (every 1-10 ms, by the kernel's HZ), so a
 * reading can be short by up to one tick: this much is added to each stretch's run time, so that the held
 * figure is never below what the thread ran (it is capped by the stretch's wall-clock length).
 */
const TICK_ALLOWANCE_MS = 10;
const QUANTILES = [0.5, 0.9, 0.99, 0.999] as const;

/** The loop-delay figures since the previous scrape. */
export interface LoopDelayWindow {
  /** Delays in seconds at QUANTILES, the largest, and how many samples and their sum. */
  readonly quantiles: readonly (readonly [number, number])[];
  readonly max: number;
  readonly count: number;
  readonly sum: number;
}

/**
 * Reads the loop thread's run time in ns: /proc/thread-self/schedstat (opened from the loop's thread, so it
 * names that thread), or undefined where there is none (not Linux, or scheduler statistics compiled out).
 */
function threadRunTime(): (() => number) | undefined {
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
 * The longest stretch the loop's thread ran between two samples. Each stretch's figure is the least of
 * three upper bounds on that thread's running: the stretch's wall-clock length, the whole process's CPU
 * time in it (exact, but other threads count too: garbage collection helpers, storage), and the thread's
 * own run time plus a scheduler tick. Where the thread's run time cannot be read, the process's counts.
 */
class HeldSampler {
  private readonly runTime = threadRunTime();
  private lastWall = performance.now();
  private lastCpu = process.cpuUsage();
  private lastRun: number;
  private max = 0;
  private timer: NodeJS.Timeout;

  constructor() {
    this.lastRun = this.runTime?.() ?? 0;
    this.timer = setTimeout(() => this.tick(), FINE_MS).unref();
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
    if (held > this.max) this.max = held;
    this.lastWall = wall;
    this.lastCpu = cpu;
    this.timer = setTimeout(() => this.tick(), held > stretch / 2 ? FINE_MS : COARSE_MS).unref();
  }

  /** The longest held stretch since the previous call, in seconds. */
  take(): number {
    const m = this.max;
    this.max = 0;
    return m / 1000;
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

/** Both samplers; each figure is read, and starts over, at every scrape. */
export class LoopDelayMonitor {
  private readonly eld: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  private readonly held = new HeldSampler();
  private count = 0;
  private sum = 0;
  /** The window the last scrape took, and which of its readers have had it (see window()). */
  private last: LoopDelayWindow | undefined;
  private readonly readBy = new Set<string>();

  constructor() {
    this.eld.enable();
  }

  /**
   * The window since the previous scrape. Two metrics read it per scrape (the summary and the max), in
   * either order: a reader that already had the current window takes a new one, the other gets the same.
   */
  window(reader: string): LoopDelayWindow {
    if (!this.last || this.readBy.has(reader)) {
      this.last = this.take();
      this.readBy.clear();
    }
    this.readBy.add(reader);
    return this.last;
  }

  /** The longest the member's own running held the loop since the previous call, in seconds. */
  heldMax(): number {
    return this.held.take();
  }

  private take(): LoopDelayWindow {
    const h = this.eld;
    const n = h.count;
    // A sample is the time between two firings of a 1 ms timer: the delay is what exceeds the resolution.
    const delay = (ns: number): number => (n === 0 ? 0 : Math.max(0, ns / 1e6 - RESOLUTION_MS) / 1000);
    const max = delay(h.max);
    const quantiles = QUANTILES.map((q) => [q, delay(h.percentile(q * 100))] as const);
    const sum = n === 0 ? 0 : Math.max(0, h.mean / 1e6 - RESOLUTION_MS) / 1000 * n;
    this.count += n;
    this.sum += sum;
    h.reset();
    return { quantiles, max, count: this.count, sum: this.sum };
  }

  stop(): void {
    this.eld.disable();
    this.held.stop();
  }
}
