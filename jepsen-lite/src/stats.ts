// Proof that the faults hit: throughput and error rates before the first fault, while a fault is
// active, and in the healed stretches after — plus per-second series for the report's plots.
import type { FaultRecord, OpRecord } from './history.js';

export interface PhaseStats {
  phase: 'before' | 'during' | 'after';
  seconds: number;
  ok: number;
  fail: number;
  info: number;
  /** Successful operations per second. */
  okPerSec: number;
  /** (fail + info) / all. */
  errorRate: number;
  p50Ms: number;
  p99Ms: number;
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export function inFault(t: number, faults: readonly FaultRecord[], endOfRun: number): boolean {
  return faults.some((f) => t >= f.start && t < (f.end ?? endOfRun));
}

export function phaseStats(ops: readonly OpRecord[], faults: readonly FaultRecord[], endOfRun: number): PhaseStats[] {
  const firstFault = faults.length ? Math.min(...faults.map((f) => f.start)) : Infinity;
  const during = faults.reduce((s, f) => s + ((f.end ?? endOfRun) - f.start), 0);
  const before = Math.min(firstFault, endOfRun);
  const dur = { before, during, after: Math.max(0, endOfRun - before - during) };
  const buckets: Record<PhaseStats['phase'], OpRecord[]> = { before: [], during: [], after: [] };
  for (const o of ops) {
    if (o.worker < 0) continue; // final reads are not load
    const p = o.start < firstFault ? 'before' : inFault(o.start, faults, endOfRun) ? 'during' : 'after';
    buckets[p].push(o);
  }
  return (['before', 'during', 'after'] as const).map((phase) => {
    const b = buckets[phase];
    const lat = b.filter((o) => o.outcome === 'ok').map((o) => o.end - o.start).sort((x, y) => x - y);
    const ok = b.filter((o) => o.outcome === 'ok').length;
    const fail = b.filter((o) => o.outcome === 'fail').length;
    const info = b.filter((o) => o.outcome === 'info').length;
    const seconds = dur[phase] / 1000;
    return { phase, seconds, ok, fail, info, okPerSec: seconds > 0 ? ok / seconds : 0, errorRate: b.length ? (fail + info) / b.length : 0, p50Ms: quantile(lat, 0.5), p99Ms: quantile(lat, 0.99) };
  });
}

/** Completions per whole second, by outcome. */
export function perSecond(ops: readonly OpRecord[], endOfRun: number): { ok: number[]; fail: number[]; info: number[] } {
  const n = Math.max(1, Math.ceil(endOfRun / 1000));
  const out = { ok: new Array<number>(n).fill(0), fail: new Array<number>(n).fill(0), info: new Array<number>(n).fill(0) };
  for (const o of ops) {
    if (o.worker < 0) continue;
    const s = Math.min(n - 1, Math.floor(o.end / 1000));
    out[o.outcome][s]!++;
  }
  return out;
}
