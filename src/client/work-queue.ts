// client-go's rate-limited work queue. Keys are deduplicated while they wait (dirty), a key being
// handled (processing) is never handed to a second worker: adding it again marks it dirty and it
// returns to the queue when the first worker calls done(). Delays go through the clock, so tests
// drive backoff with a ManualClock.
import { realClock, type Clock, type Timer } from './clock.js';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.js';

export interface WorkQueueOptions<T> {
  readonly clock?: Clock;
  readonly rateLimiter?: RateLimiter<T>;
}

export class WorkQueue<T> {
  private readonly clock: Clock;
  private readonly limiter: RateLimiter<T>;
  private queue: T[] = [];
  private readonly dirty = new Set<T>();
  private readonly processing = new Set<T>();
  /** Items waiting out a delay, with their timer; an earlier addAfter of the same item wins. */
  private readonly waiting = new Map<T, { at: number; timer: Timer }>();
  private readonly getters: Array<(r: { item: T; shutdown: false } | { shutdown: true }) => void> = [];
  private shuttingDown = false;
  private drained: Array<() => void> = [];

  constructor(opts: WorkQueueOptions<T> = {}) {
    this.clock = opts.clock ?? realClock;
    this.limiter = opts.rateLimiter ?? defaultControllerRateLimiter<T>(this.clock);
  }

  add(item: T): void {
    if (this.shuttingDown || this.dirty.has(item)) return;
    this.dirty.add(item);
    if (this.processing.has(item)) return;
    this.queue.push(item);
    this.wake();
  }

  addAfter(item: T, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) {
      this.add(item);
      return;
    }
    const at = this.clock.now() + ms;
    const w = this.waiting.get(item);
    if (w && w.at <= at) return;
    w?.timer.cancel();
    const timer = this.clock.setTimer(() => {
      this.waiting.delete(item);
      this.add(item);
    }, ms);
    this.waiting.set(item, { at, timer });
  }

  /** Re-adds after the rate limiter's delay (a failure: the item's backoff grows). */
  addRateLimited(item: T): void {
    this.addAfter(item, this.limiter.when(item));
  }

  /** The item succeeded: its backoff starts over. */
  forget(item: T): void {
    this.limiter.forget(item);
  }

  numRequeues(item: T): number {
    return this.limiter.numRequeues(item);
  }

  len(): number {
    return this.queue.length;
  }

  /** The next item, marked as processing; `shutdown: true` once the queue is shut down and empty. */
  get(): Promise<{ item: T; shutdown: false } | { shutdown: true }> {
    const item = this.take();
    if (item) return Promise.resolve({ item: item.value, shutdown: false });
    if (this.shuttingDown) return Promise.resolve({ shutdown: true });
    return new Promise((resolve) => this.getters.push(resolve));
  }

  done(item: T): void {
    this.processing.delete(item);
    if (this.dirty.has(item)) {
      this.queue.push(item);
      this.wake();
    }
    if (this.processing.size === 0 && this.drained.length > 0) {
      for (const d of this.drained.splice(0)) d();
    }
  }

  /** Stops accepting items; workers get what is queued, then `shutdown`. Pending delays are dropped. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const w of this.waiting.values()) w.timer.cancel();
    this.waiting.clear();
    // Items still queued are handed out; only idle getters learn of the shutdown now.
    if (this.queue.length === 0) for (const g of this.getters.splice(0)) g({ shutdown: true });
  }

  /** shutDown, then resolves once every item being processed is done. */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  private take(): { value: T } | undefined {
    if (this.queue.length === 0) return undefined;
    const value = this.queue.shift() as T;
    this.processing.add(value);
    this.dirty.delete(value);
    return { value };
  }

  private wake(): void {
    while (this.getters.length > 0 && this.queue.length > 0) {
      const g = this.getters.shift();
      const item = this.take();
      if (g && item) g({ item: item.value, shutdown: false });
    }
    if (this.shuttingDown && this.queue.length === 0) for (const g of this.getters.splice(0)) g({ shutdown: true });
  }
}
