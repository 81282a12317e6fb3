// The work queue as client-go's: dedup while waiting, never one key in two workers, per-item backoff
// plus the shared bucket, delays and draining — driven by a ManualClock.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/client/manual-clock.js';
import { defaultControllerRateLimiter, ItemExponentialRateLimiter, TokenBucket } from '../../src/client/rate-limiter.js';
import { WorkQueue } from '../../src/client/work-queue.js';

async function next<T>(q: WorkQueue<T>): Promise<T> {
  const r = await q.get();
  if (r.shutdown) throw new Error('queue shut down');
  return r.item;
}

describe('WorkQueue', () => {
  it('deduplicates a key while it waits', async () => {
    const q = new WorkQueue<string>({ clock: new ManualClock() });
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.len()).toBe(2);
    expect(await next(q)).toBe('a');
    expect(await next(q)).toBe('b');
  });

  it('never hands one key to two workers; a re-add during processing comes back after done', async () => {
    const q = new WorkQueue<string>({ clock: new ManualClock() });
    q.add('a');
    expect(await next(q)).toBe('a');
    q.add('a');
    q.add('a');
    expect(q.len()).toBe(0);
    let second: string | undefined;
    const p = next(q).then((v) => (second = v));
    await Promise.resolve();
    expect(second).toBeUndefined();
    q.done('a');
    await p;
    expect(second).toBe('a');
    q.done('a');
    expect(q.len()).toBe(0);
  });

  it('addAfter waits on the clock, the earlier of two delays wins', async () => {
    const clock = new ManualClock();
    const q = new WorkQueue<string>({ clock });
    q.addAfter('a', 100);
    q.addAfter('a', 50);
    clock.advance(49);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.len()).toBe(1);
    clock.advance(100);
    expect(q.len()).toBe(1);
  });

  it('backs off per item, 5 ms doubling, until forget', async () => {
    const clock = new ManualClock();
    const q = new WorkQueue<string>({ clock, rateLimiter: new ItemExponentialRateLimiter(5, 1000_000) });
    q.addRateLimited('a');
    clock.advance(4);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(await next(q)).toBe('a');
    q.done('a');
    q.addRateLimited('a');
    clock.advance(9);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.len()).toBe(1);
    expect(q.numRequeues('a')).toBe(2);
    q.forget('a');
    expect(q.numRequeues('a')).toBe(0);
  });

  it('shutdown hands out what is queued, then says so; drain waits for workers', async () => {
    const q = new WorkQueue<string>({ clock: new ManualClock() });
    q.add('a');
    q.add('b');
    expect(await next(q)).toBe('a');
    let drained = false;
    const d = q.shutDownWithDrain().then(() => (drained = true));
    q.add('c');
    expect(await next(q)).toBe('b');
    q.done('b');
    expect((await q.get()).shutdown).toBe(true);
    await Promise.resolve();
    expect(drained).toBe(false);
    q.done('a');
    await d;
    expect(drained).toBe(true);
  });
});

describe('rate limiters', () => {
  it('the exponential backoff caps at 1000 s', () => {
    const l = new ItemExponentialRateLimiter<string>(5, 1000_000);
    const ds = Array.from({ length: 30 }, () => l.when('x'));
    expect(ds.slice(0, 4)).toEqual([5, 10, 20, 40]);
    expect(ds[29]).toBe(1000_000);
  });

  it('the default limiter: the bucket allows a burst of 100, then 10 per second', () => {
    const clock = new ManualClock();
    const l = defaultControllerRateLimiter<string>(clock);
    const ds = Array.from({ length: 102 }, (_, i) => l.when(`k${i}`));
    expect(ds.slice(0, 100).every((d) => d === 5)).toBe(true);
    expect(ds[100]).toBeCloseTo(100);
    expect(ds[101]).toBeCloseTo(200);
  });

  it('a token bucket refills at its rate', () => {
    const clock = new ManualClock();
    const b = new TokenBucket(1, 2, clock);
    expect([b.tryTake(), b.tryTake(), b.tryTake()]).toEqual([true, true, false]);
    clock.advance(1000);
    expect(b.tryTake()).toBe(true);
  });
});
