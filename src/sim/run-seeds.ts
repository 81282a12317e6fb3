// A range of seeds, aggregated: what the CLI and the tests run. Stops at the first violation unless
// told otherwise, since one replayable failure is what a developer needs.
import { runSeed, type SeedResult, type SimOptions } from './run-seed.js';

export interface RangeOptions extends Omit<SimOptions, 'seed'> {
  readonly from: number;
  readonly to: number;
  /** Keep going after a violation (default: stop). */
  readonly keepGoing?: boolean;
}

export interface RunSummary {
  seedsRun: number;
  readonly violations: SeedResult[];
  elections: number;
  commits: number;
  writesAcked: number;
  readsChecked: number;
  leasesGranted: number;
  leasesRevoked: number;
  messages: number;
  messagesDropped: number;
  messagesDuplicated: number;
  readonly faults: Map<string, number>;
  maxRecoverTicks: number;
  maxRecoverSeed: number;
  maxConvergeTicks: number;
  maxConvergeSeed: number;
}

export function emptySummary(): RunSummary {
  return {
    seedsRun: 0,
    violations: [],
    elections: 0,
    commits: 0,
    writesAcked: 0,
    readsChecked: 0,
    leasesGranted: 0,
    leasesRevoked: 0,
    messages: 0,
    messagesDropped: 0,
    messagesDuplicated: 0,
    faults: new Map(),
    maxRecoverTicks: -1,
    maxRecoverSeed: 0,
    maxConvergeTicks: -1,
    maxConvergeSeed: 0,
  };
}

export function addResult(s: RunSummary, r: SeedResult): void {
  const st = r.stats;
  s.seedsRun++;
  if (r.violation !== undefined) s.violations.push(r);
  s.elections += st.elections;
  s.commits += st.commits;
  s.writesAcked += st.writesAcked;
  s.readsChecked += st.readsChecked;
  s.leasesGranted += st.leasesGranted ?? 0;
  s.leasesRevoked += st.leasesRevoked ?? 0;
  s.messages += st.messages.sent;
  s.messagesDropped += st.messages.dropped;
  s.messagesDuplicated += st.messages.duplicated;
  for (const [k, v] of st.faults) s.faults.set(k, (s.faults.get(k) ?? 0) + v);
  if (st.recoverTicks > s.maxRecoverTicks) {
    s.maxRecoverTicks = st.recoverTicks;
    s.maxRecoverSeed = r.options.seed;
  }
  if (st.convergeTicks > s.maxConvergeTicks) {
    s.maxConvergeTicks = st.convergeTicks;
    s.maxConvergeSeed = r.options.seed;
  }
}

export function runSeeds(o: RangeOptions, onResult?: (r: SeedResult) => void): RunSummary {
  const s = emptySummary();
  const { from, to, keepGoing, ...rest } = o;
  for (let seed = from; seed <= to; seed++) {
    const r = runSeed({ ...rest, seed });
    addResult(s, r);
    onResult?.(r);
    if (r.violation !== undefined && keepGoing !== true) break;
  }
  return s;
}

/** The first seed in the range that finds a violation, or undefined. */
export function firstViolation(o: Omit<RangeOptions, 'keepGoing'>): SeedResult | undefined {
  return runSeeds(o).violations[0];
}
