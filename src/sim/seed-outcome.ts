// The result of one seed, the same for both simulations (the core alone, run-seed.ts, and the member's
// loop, member-loop/run-member-seed.ts): the violation, if the run threw one, and the run's counters.
import type { NetCounters } from './cluster.js';
import type { SeedResult, SeedStats, SeedViolation, SimOptions } from './run-seed.js';
import type { Trace } from './trace.js';
import { SimViolation, type ViolationKind } from './violation.js';

/** What a finished run is read from (SimCluster and MemberCluster both are one). */
export interface FinishedRun {
  readonly now: number;
  readonly checker: { readonly elections: number; readonly commits: number };
  readonly clients: { readonly acked: number };
  readonly reads: { readonly checked: number };
  readonly faultCounts: ReadonlyMap<string, number>;
  readonly netCounters: NetCounters;
  readonly trace: Trace;
  readonly leases?: { readonly granted: number; readonly revoked: number };
  note(text: string): void;
}

/** `error`: what the run threw (undefined when it finished); anything but a SimViolation is a core error. */
export function seedOutcome(o: SimOptions, run: FinishedRun, error: unknown, recoverTicks: number, convergeTicks: number): SeedResult {
  let violation: SeedViolation | undefined;
  if (error !== undefined) {
    const kind: ViolationKind = error instanceof SimViolation ? error.kind : 'core-error';
    const message = error instanceof SimViolation ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error);
    run.note(`VIOLATION ${message.split('\n')[0] ?? ''}`);
    violation = { kind, message, tick: run.now, trace: run.trace.lines() };
  }
  const stats: SeedStats = {
    ticks: run.now,
    elections: run.checker.elections,
    commits: run.checker.commits,
    writesAcked: run.clients.acked,
    readsChecked: run.reads.checked,
    faults: run.faultCounts,
    messages: run.netCounters,
    recoverTicks,
    convergeTicks,
    ...(run.leases !== undefined ? { leasesGranted: run.leases.granted, leasesRevoked: run.leases.revoked } : {}),
  };
  return { options: o, traceHash: run.trace.hash, stats, ...(violation !== undefined ? { violation } : {}) };
}
