// Checks the register workload: P-compositional, one linearizability search per key (Horn & Kroening),
// each bounded in time; the first anomalies are minimized and explained.
import type { OpRecord } from '../history.js';
import { checkLinearizable, type LinOp } from './linearizable.js';
import { describeRegOp, registerModel, whyIllegal, type RegInput, type RegOutput } from './register-model.js';
import type { CheckResult, Verdict } from './result.js';
import { explainWitness, minimizeWitness } from './witness.js';

export function toRegisterOps(ops: readonly OpRecord[]): Map<string, LinOp<RegInput, RegOutput>[]> {
  const byKey = new Map<string, LinOp<RegInput, RegOutput>[]>();
  for (const o of ops) {
    if (o.key === undefined || o.outcome === 'fail') continue;
    if (o.f === 'read' && o.outcome === 'info') continue; // a read that did not return tells nothing
    let input: RegInput;
    if (o.f === 'read') input = { f: 'read' };
    else if (o.f === 'write') input = { f: 'write', value: o.input as number };
    else if (o.f === 'cas') {
      const [from, to] = o.input as [number, number];
      input = { f: 'cas', from, to };
    } else continue;
    const output = o.outcome === 'info' ? undefined : o.f === 'write' ? true : (o.output as RegOutput);
    const list = byKey.get(o.key) ?? [];
    list.push({ id: o.id, input, output, call: o.start, ret: o.outcome === 'info' ? Infinity : o.end });
    byKey.set(o.key, list);
  }
  return byKey;
}

export interface RegisterCheckOptions {
  /** Total time for all keys, ms. */
  budgetMs: number;
  /** How many failing keys get a minimized, explained witness. */
  explain: number;
}

export function checkRegister(ops: readonly OpRecord[], o: RegisterCheckOptions = { budgetMs: 60_000, explain: 3 }): CheckResult {
  const byKey = toRegisterOps(ops);
  const byId = new Map(ops.map((x) => [x.id, x]));
  const deadline = Date.now() + o.budgetMs;
  const perKey = Math.max(1000, Math.floor(o.budgetMs / Math.max(1, byKey.size)));
  let valid: Verdict = true;
  let ok = 0;
  let bad = 0;
  let unknown = 0;
  let explored = 0;
  const anomalies: CheckResult['anomalies'] = [];
  for (const [key, lops] of [...byKey].sort(([a], [b]) => a.localeCompare(b))) {
    const r = checkLinearizable(registerModel, lops, { deadline: Math.min(deadline, Date.now() + perKey * 4) });
    explored += r.explored;
    if (r.valid === true) ok++;
    else if (r.valid === 'unknown') {
      unknown++;
      if (valid === true) valid = 'unknown';
      anomalies.push({ kind: 'unknown', key, explanation: [`key ${key}: ${r.reason} (${lops.length} operations)`] });
    } else {
      bad++;
      valid = false;
      if (anomalies.filter((a) => a.kind === 'nonlinearizable').length >= o.explain) {
        anomalies.push({ kind: 'nonlinearizable', key, explanation: [`key ${key}: not linearizable (not minimized)`] });
        continue;
      }
      // The search could not pass the blocked op's return: ops invoked after it cannot help explain it.
      const blockedRet = lops.find((l) => l.id === r.blockedAt)?.ret ?? Infinity;
      const prefix = lops.filter((l) => l.call <= blockedRet);
      const start = checkLinearizable(registerModel, prefix, { maxSteps: 500_000 }).valid === false ? prefix : lops;
      const w = minimizeWitness(registerModel, start, 5000, registerAdmissible(lops));
      const label = (l: (typeof lops)[number]): string => {
        const rec = byId.get(l.id);
        return rec ? `process ${rec.process} (via n${rec.node + 1})` : `op ${l.id}`;
      };
      const lone = w.length === 1 ? w[0]! : undefined;
      const neverWritten =
        lone && lone.input.f === 'read' && typeof lone.output === 'number'
          ? [`No acknowledged or pending write of ${lone.output} exists: the value was never written, or its write failed for certain.`]
          : [];
      anomalies.push({
        kind: 'nonlinearizable',
        key,
        ops: w.map((x) => x.id),
        explanation: [
          `key ${key}: not linearizable. Smallest failing sub-history (${w.length} of ${lops.length} operations):`,
          ...explainWitness(registerModel, w, describeRegOp, whyIllegal, label),
          ...neverWritten,
        ],
      });
    }
  }
  return {
    name: 'linearizable (register, per key)',
    valid,
    stats: { keys: byKey.size, 'keys ok': ok, 'keys invalid': bad, 'keys unknown': unknown, 'search steps': explored },
    anomalies,
  };
}

/**
 * A register sub-history is a fair witness only if (1) every value a remaining read or successful cas
 * observed still has its writer, and (2) every write that could have come between a failed cas's
 * expected value and the cas is still there (otherwise the failure loses its explanation).
 */
export function registerAdmissible(all: LinOp<RegInput, RegOutput>[]): (cand: LinOp<RegInput, RegOutput>[]) => boolean {
  const writerOf = new Map<number, LinOp<RegInput, RegOutput>>();
  const writes: LinOp<RegInput, RegOutput>[] = [];
  for (const o of all) {
    if (o.input.f === 'write') writerOf.set(o.input.value, o);
    if (o.input.f === 'cas' && o.output !== false) writerOf.set(o.input.to, o);
    if (o.input.f === 'write' || (o.input.f === 'cas' && o.output !== false)) writes.push(o);
  }
  return (cand) => {
    const have = new Set(cand);
    for (const o of cand) {
      const seen = o.input.f === 'read' ? (typeof o.output === 'number' ? o.output : undefined) : o.input.f === 'cas' ? o.input.from : undefined;
      if (seen === undefined) continue;
      const w = writerOf.get(seen);
      if (o.input.f === 'cas' && o.output === false) {
        if (!w) continue;
        for (const x of writes) if (x !== w && x.call < o.ret && x.ret > w.call && !have.has(x)) return false;
      } else if (w && !have.has(w)) return false;
    }
    return true;
  };
}
