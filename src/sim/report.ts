// Human-readable output of the simulation: a failed seed's report and the end-of-run summary.
import { CONVERGE_BOUND, RECOVER_BOUND, replayCommand, type SeedResult } from './run-seed.js';
import type { RunSummary } from './run-seeds.js';

export function formatViolation(r: SeedResult): string {
  const v = r.violation;
  if (v === undefined) return `seed ${r.options.seed}: ok`;
  return [
    `VIOLATION in seed ${r.options.seed} at tick ${v.tick}: ${v.kind}`,
    `  ${v.message.split('\n').join('\n  ')}`,
    `replay: ${replayCommand(r.options)}`,
    `last ${v.trace.length} events:`,
    ...v.trace.map((l) => `  ${l}`),
  ].join('\n');
}

export function formatSummary(s: RunSummary, seconds: number): string {
  const faults = [...s.faults.entries()].sort(([a], [b]) => a.localeCompare(b));
  const total = faults.reduce((n, [, v]) => n + v, 0);
  const rate = seconds > 0 ? (s.seedsRun / seconds).toFixed(1) : '-';
  return [
    `seeds run:           ${s.seedsRun} in ${seconds.toFixed(1)} s (${rate} seeds/s)`,
    `violations:          ${s.violations.length}${s.violations.length > 0 ? ` (first: seed ${s.violations[0]?.options.seed ?? '?'})` : ''}`,
    `elections:           ${s.elections}`,
    `entries committed:   ${s.commits}`,
    `writes acknowledged: ${s.writesAcked}`,
    `reads checked:       ${s.readsChecked}`,
    ...(s.leasesGranted > 0 ? [`leases:              ${s.leasesGranted} granted, ${s.leasesRevoked} revoked on expiry through Raft`] : []),
    `messages sent:       ${s.messages} (${s.messagesDropped} lost to drops, cuts or down nodes; ${s.messagesDuplicated} duplicated)`,
    `faults injected:     ${total}`,
    ...faults.map(([k, v]) => `  ${k.padEnd(26)}${v}`),
    `max ticks to recover (leader + fresh commit after heal): ${s.maxRecoverTicks} (seed ${s.maxRecoverSeed}; bound ${RECOVER_BOUND})`,
    `max ticks to converge (all members applied, quiet):      ${s.maxConvergeTicks} (seed ${s.maxConvergeSeed}; bound ${CONVERGE_BOUND})`,
  ].join('\n');
}
