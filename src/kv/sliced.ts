// Work that may be too big for one turn of the event loop, written once as a generator that yields at
// points where it may pause, and run either to its end at once (small work, the hot path) or in slices of
// a few milliseconds with a turn of the event loop between them, so that the member's Raft ticks,
// heartbeats and clients are served while a delete of 500,000 keys is applied (issue 25 §2).
import { setImmediate as nextTurn } from 'node:timers/promises';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** A piece of work that yields where it may pause and returns its result. */
export type Sliced<T> = Generator<void, T, void>;

/** How long one slice may run before the loop gets a turn (ms). */
export const SLICE_BUDGET_MS = 5;

/** Items (keys, events) a sliced loop handles between two yields: the clock is read only at yields. */
export const SLICE_ITEMS = 256;

/**
 * Bytes of young generation that a long piece of work may fill before it collects them itself, between
 * two slices. What such work allocates mostly lives until it ends (a delete's events, tombstones and
 * records), and a scavenge's pause grows with what survives it: with the members' 64 MiB semi-spaces
 * (src/cli/member-node-flags.ts) V8's own scavenge found up to 64 MiB alive and held the loop 40-55 ms
 * in one piece. Collected at 8 MiB, a scavenge of a member in the 500,000-key delete still took 35-80 ms
 * (three members on two cores: V8 copied ~350 KB/ms there, ~1 MB/ms in a store alone); at 2 MiB it takes
 * a quarter of that, in a turn of its own (turn()).
 */
const YOUNG_LIMIT_BYTES = 2 * 1024 * 1024;

type MinorGc = () => void;
let minorGc: MinorGc | undefined;

/**
 * V8's gc() asked for a scavenge only; exposed once, on first use (the flag applies to contexts created
 * after it). A runtime without it leaves the collection to V8, as before.
 */
function scavenger(): MinorGc {
  if (!minorGc) {
    try {
      setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc') as (o: { type: 'minor' }) => void;
      minorGc = () => gc({ type: 'minor' });
    } catch {
      minorGc = () => undefined;
    }
  }
  return minorGc;
}

function youngBytes(): number {
  for (const s of getHeapSpaceStatistics()) if (s.space_name === 'new_space') return s.space_used_size;
  return 0;
}

/** The young generation's use after the last scavenge collectYoung() asked for. */
let youngAfter = 0;

/**
 * For long work, between two of its slices: a scavenge if the young generation has grown by more than
 * YOUNG_LIMIT_BYTES since the last one asked for here (V8's own, in between, only make it smaller).
 */
export function collectYoung(): boolean {
  if (youngBytes() - youngAfter <= YOUNG_LIMIT_BYTES) return false;
  scavenger()();
  youngAfter = youngBytes();
  return true;
}

/**
 * A turn of the event loop between two slices of long work, and the scavenge collectYoung() may ask for
 * in a turn of its own: a slice and a scavenge back to back held the loop for both.
 */
export async function turn(): Promise<void> {
  await nextTurn();
  if (collectYoung()) await nextTurn();
}

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
      await turn();
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
