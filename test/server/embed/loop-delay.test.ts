// The member's loop-delay figures (src/server/embed/loop-delay.ts): a loop held by running shows in both
// the wall-clock delay and the held figure; a loop whose thread sleeps (here in Atomics.wait, as a thread
// waiting for a CPU does not run either) shows in the wall-clock delay only; the maxima start over at every
// reading, also when the stall comes right after it. On /metrics they are a summary and two gauges.
import { afterAll, describe, expect, it } from 'vitest';
import { LoopDelayMonitor } from '../../../src/server/embed/loop-delay.js';
import { createMetrics } from '../../../src/server/embed/metrics.js';

const turn = (): Promise<void> => new Promise((r) => setTimeout(r, 20));

/** Runs for `ms` of this thread's CPU time (on a loaded machine that takes longer in wall-clock time). */
function spin(ms: number): void {
  const start = process.cpuUsage();
  for (;;) {
    const d = process.cpuUsage(start);
    if (d.user + d.system >= ms * 1000) return;
  }
}

function sleepThread(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe('the loop-delay monitor', () => {
  const monitor = new LoopDelayMonitor();
  afterAll(() => monitor.stop());
  /** Both maxima since the previous reading, in seconds. */
  const read = (): { delay: number; held: number } => ({ delay: monitor.max('delay'), held: monitor.max('held') });

  it('counts a loop held by running in both figures, and a sleeping thread in the wall-clock one only', async () => {
    await turn();
    read();
    spin(120); // right after the reading: a stall there must count too
    await turn();
    const busy = read();
    expect(busy.delay).toBeGreaterThanOrEqual(0.1);
    expect(busy.held).toBeGreaterThanOrEqual(0.1);

    sleepThread(120);
    await turn();
    const asleep = read();
    expect(asleep.delay).toBeGreaterThanOrEqual(0.1);
    // The thread did not run while it slept: at most a scheduler tick's allowance and a little work.
    expect(asleep.held).toBeLessThan(0.05);
  });

  it('starts the maxima over at every reading', async () => {
    spin(60);
    await turn();
    const stalled = read();
    expect(stalled.delay).toBeGreaterThanOrEqual(0.05);
    expect(stalled.held).toBeGreaterThanOrEqual(0.05);
    await turn();
    const quiet = read();
    // Quiet, as far as the member's own running goes; the wall clock also counts waiting for a CPU.
    expect(quiet.held).toBeLessThan(0.05);
  });

  it('gives the two gauges of one scrape the same pair, in either order', async () => {
    spin(60);
    await turn();
    const held = monitor.max('held');
    const delay = monitor.max('delay');
    expect(held).toBeGreaterThanOrEqual(0.05);
    expect(delay).toBeGreaterThanOrEqual(0.05);
    await turn();
    expect(monitor.max('delay')).toBeLessThan(delay);
  });

  it('keeps a summary since the start, with its quantiles', () => {
    const s = monitor.summary();
    expect(s.count).toBeGreaterThan(0);
    expect(s.quantiles.map(([q]) => q)).toEqual([0.5, 0.9, 0.99, 0.999]);
    expect(s.sum).toBeGreaterThan(0.1); // the stalls above are in it
  });
});

describe('the loop-delay metrics on /metrics', () => {
  it('are a summary and two gauges under their setpoint_ names', async () => {
    const text = await createMetrics({ processMetrics: true }).registry.metrics();
    expect(text).toContain('# TYPE setpoint_event_loop_delay_seconds summary');
    expect(text).toMatch(/^setpoint_event_loop_delay_seconds\{quantile="0.99"\} \S+$/m);
    expect(text).toMatch(/^setpoint_event_loop_delay_seconds_count \d+$/m);
    expect(text).toMatch(/^setpoint_event_loop_delay_max_seconds \S+$/m);
    expect(text).toMatch(/^setpoint_event_loop_held_max_seconds \S+$/m);
  });
});
