// Work that may be too big for one turn of the event loop, written once as a generator that yields at
// points where it may pause, and run either to its end at once (small work, the hot path) or in slices of
// a few milliseconds with a turn of the event loop between them, so that the member's Raft ticks,
// heartbeats and clients are served while a delete of 500,000 keys is applied (issue 25 §2).
import { setImmediate as nextTurn } from 'node:timers/promises';

/** A piece of work that yields where it may pause and returns its result. */
export type Sliced<T> = Generator<void, T, void>;

/** How long one slice may run before the loop gets a turn (ms). */
export const SLICE_BUDGET_MS = 5;

/** Items (keys, events) a sliced loop handles between two yields: the clock is read only at yields. */
export const SLICE_ITEMS = 256;

/** Runs `work` to its end without pausing. */
export function runNow<T>(work: Sliced<T>): T {
  for (;;) {
    const r = work.next();
    if (r.done) return r.value;
  }
}

/** Runs `work` in slices of about `budgetMs`, giving the event loop a turn between slices. */
export async function runSliced<T>(work: Sliced<T>, budgetMs = SLICE_BUDGET_MS): Promise<T> {
  let deadline = performance.now() + budgetMs;
  for (;;) {
    const r = work.next();
    if (r.done) return r.value;
    if (performance.now() >= deadline) {
      await nextTurn();
      deadline = performance.now() + budgetMs;
    }
  }
}

/** Strings a slice sorts in one piece before the runs are merged. */
const SORT_RUN = 2048;

/**
 * Sorts `a` in place (code-unit order, as Array.prototype.sort with no comparator), yielding as it goes:
 * runs of SORT_RUN sorted by the engine, then merged bottom-up a bounded number of elements per slice.
 * Sorting half a million keys in one piece holds the loop for a third of a second.
 */
export function* sortSliced(a: string[]): Sliced<string[]> {
  const n = a.length;
  for (let i = 0; i < n; i += SORT_RUN) {
    const run = a.slice(i, i + SORT_RUN).sort();
    for (let j = 0; j < run.length; j++) a[i + j] = run[j] as string;
    yield;
  }
  let src = a;
  let dst: string[] = new Array<string>(n);
  let done = 0;
  for (let width = SORT_RUN; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      for (let k = lo; k < hi; k++) {
        if (i < mid && (j >= hi || (src[i] as string) <= (src[j] as string))) dst[k] = src[i++] as string;
        else dst[k] = src[j++] as string;
        if (++done % (SLICE_ITEMS * 16) === 0) yield;
      }
    }
    [src, dst] = [dst, src];
  }
  if (src !== a) for (let k = 0; k < n; k++) a[k] = src[k] as string;
  return a;
}
