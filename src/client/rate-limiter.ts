// client-go's controller rate limiters: how long an item waits before it is retried. The default is the
// slower of a per-item exponential backoff (5 ms doubling to 1000 s) and one token bucket shared by all
// items (10 qps, burst 100), exactly DefaultControllerRateLimiter's shape.
import type { Clock } from './clock.js';

export interface RateLimiter<T> {
  /** The delay before this item may be handled again; counts a failure. */
  when(item: T): number;
  /** Clears the item's failure history (it succeeded). */
  forget(item: T): void;
  numRequeues(item: T): number;
}

export class ItemExponentialRateLimiter<T> implements RateLimiter<T> {
  private readonly failures = new Map<T, number>();
  constructor(
    private readonly baseMs: number,
    private readonly maxMs: number,
  ) {}

  when(item: T): number {
    const n = this.failures.get(item) ?? 0;
    this.failures.set(item, n + 1);
    // 2^n overflows to Infinity long before it matters; the cap makes it exact.
    return Math.min(this.baseMs * 2 ** n, this.maxMs);
  }

  forget(item: T): void {
    this.failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}

/** golang.org/x/time/rate's Limiter as a reservation: each call takes a token, possibly one not yet earned. */
export class TokenBucket {
  private tokens: number;
  private last: number;
  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly clock: Clock,
  ) {
    this.tokens = burst;
    this.last = clock.now();
  }

  private refill(): void {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
  }

  /** Takes a token and says how long to wait for it (0 when one was there). */
  reserve(): number {
    this.refill();
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  /** Takes a token only if one is there now (the event spam filter's check). */
  tryTake(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

export class BucketRateLimiter<T> implements RateLimiter<T> {
  private readonly bucket: TokenBucket;
  constructor(qps: number, burst: number, clock: Clock) {
    this.bucket = new TokenBucket(qps, burst, clock);
  }
  when(_item: T): number {
    return this.bucket.reserve();
  }
  forget(_item: T): void {}
  numRequeues(_item: T): number {
    return 0;
  }
}

export class MaxOfRateLimiter<T> implements RateLimiter<T> {
  constructor(private readonly limiters: readonly RateLimiter<T>[]) {}
  when(item: T): number {
    let d = 0;
    for (const l of this.limiters) d = Math.max(d, l.when(item));
    return d;
  }
  forget(item: T): void {
    for (const l of this.limiters) l.forget(item);
  }
  numRequeues(item: T): number {
    let n = 0;
    for (const l of this.limiters) n = Math.max(n, l.numRequeues(item));
    return n;
  }
}

export function defaultControllerRateLimiter<T>(clock: Clock): RateLimiter<T> {
  return new MaxOfRateLimiter<T>([new ItemExponentialRateLimiter<T>(5, 1000_000), new BucketRateLimiter<T>(10, 100, clock)]);
}
