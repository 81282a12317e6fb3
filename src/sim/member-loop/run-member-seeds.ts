// A range of member-loop seeds, aggregated as run-seeds.ts aggregates the core's: stops at the first
// violation unless told otherwise.
import type { SeedResult } from '../run-seed.js';
import { addResult, emptySummary, type RangeOptions, type RunSummary } from '../run-seeds.js';
import { runMemberSeed } from './run-member-seed.js';

export async function runMemberSeeds(o: RangeOptions, onResult?: (r: SeedResult) => void): Promise<RunSummary> {
  const s = emptySummary();
  const { from, to, keepGoing, ...rest } = o;
  for (let seed = from; seed <= to; seed++) {
    const r = await runMemberSeed({ ...rest, seed, memberLoop: true });
    addResult(s, r);
    onResult?.(r);
    if (r.violation !== undefined && keepGoing !== true) break;
  }
  return s;
}
