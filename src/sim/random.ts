// Seeded choices shared by the fault injector, the workload and the per-seed setup.
import type { Rng } from '../raft/rng.js';

export function chance(rng: Rng, p: number): boolean {
  return p > 0 && rng.float() < p;
}

/** Uniform integer in [lo, hi]. */
export function between(rng: Rng, [lo, hi]: readonly [number, number]): number {
  return lo + rng.int(hi - lo + 1);
}

export function pick<T>(rng: Rng, xs: readonly T[]): T | undefined {
  return xs.length === 0 ? undefined : xs[rng.int(xs.length)];
}

export function shuffled<T>(rng: Rng, xs: readonly T[]): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    const t = a[i] as T;
    a[i] = a[j] as T;
    a[j] = t;
  }
  return a;
}

/** A count with the given mean: the whole part always, the fraction as a chance of one more. */
export function countFor(rng: Rng, rate: number): number {
  const whole = Math.floor(rate);
  return whole + (rng.float() < rate - whole ? 1 : 0);
}
