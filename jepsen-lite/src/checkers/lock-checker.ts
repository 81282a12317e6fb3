// Lock checks. Mutual exclusion: no two clients believed they held the lock at the same moment (from
// an acquire's return to its release's invocation). Unfenced appends: updates lost by the lock alone.
// Both are reported as warnings — etcd documents that a lease lock alone cannot guarantee exclusion.
// Fenced appends (Txn guarded on the lock key's create revision) must lose nothing: that is the verdict.
import type { OpRecord } from '../history.js';
import type { Anomaly, CheckResult } from './result.js';

interface Hold {
  worker: number;
  process: number;
  from: number;
  to: number;
  rev: number;
  acquireOp: number;
}

export function holds(ops: readonly OpRecord[]): Hold[] {
  const byWorker = new Map<number, OpRecord[]>();
  for (const o of ops) if (o.f === 'acquire' || o.f === 'release') byWorker.set(o.worker, [...(byWorker.get(o.worker) ?? []), o]);
  const out: Hold[] = [];
  const end = Math.max(0, ...ops.map((o) => o.end).filter(Number.isFinite));
  for (const [worker, list] of byWorker) {
    list.sort((a, b) => a.start - b.start);
    list.forEach((o, i) => {
      if (o.f !== 'acquire' || o.outcome !== 'ok') return;
      const rel = list.slice(i + 1).find((x) => x.f === 'release');
      out.push({ worker, process: o.process, from: o.end, to: rel ? rel.start : end, rev: o.output as number, acquireOp: o.id });
    });
  }
  return out.sort((a, b) => a.from - b.from);
}

export function checkLock(ops: readonly OpRecord[], finals: { unfenced: number[] | undefined; fenced: number[] | undefined }): CheckResult {
  const warnings: Anomaly[] = [];
  const anomalies: Anomaly[] = [];
  const hs = holds(ops);
  let overlaps = 0;
  for (let i = 0; i < hs.length; i++) {
    for (let j = i + 1; j < hs.length && hs[j]!.from < hs[i]!.to; j++) {
      const a = hs[i]!;
      const b = hs[j]!;
      if (a.worker === b.worker) continue;
      overlaps++;
      if (warnings.length < 5) {
        warnings.push({
          kind: 'mutual-exclusion',
          ops: [a.acquireOp, b.acquireOp],
          explanation: [
            `process ${a.process} held the lock (token ${a.rev}) from ${(a.from / 1000).toFixed(3)}s to ${(a.to / 1000).toFixed(3)}s, ` +
              `yet process ${b.process} acquired it (token ${b.rev}) at ${(b.from / 1000).toFixed(3)}s.`,
            'A lease lock alone cannot prevent this: the first holder cannot know its lease expired. Fencing on the token keeps writes safe.',
          ],
        });
      }
    }
  }
  const stats: Record<string, number | string> = { acquisitions: hs.length, 'exclusion violations': overlaps };
  const listCheck = (f: string, final: number[] | undefined, into: Anomaly[], label: string): void => {
    const acked = ops.filter((o) => o.f === f && o.outcome === 'ok').map((o) => o.input as number);
    const failed = new Set(ops.filter((o) => o.f === f && o.outcome === 'fail').map((o) => o.input as number));
    stats[`${label} acknowledged`] = acked.length;
    if (!final) {
      into.push({ kind: 'no-final-read', explanation: [`no final read of the ${label} list`] });
      return;
    }
    const have = new Set(final);
    const lost = acked.filter((e) => !have.has(e));
    stats[`${label} lost`] = lost.length;
    if (lost.length) {
      into.push({
        kind: `${label}-lost-update`,
        ops: ops.filter((o) => o.f === f && lost.includes(o.input as number)).map((o) => o.id).slice(0, 50),
        explanation: [`${lost.length} acknowledged ${label} append(s) are missing from the final list: ${lost.slice(0, 15).join(', ')}${lost.length > 15 ? ', …' : ''}.`],
      });
    }
    const bogus = final.filter((e) => failed.has(e));
    if (bogus.length) into.push({ kind: `${label}-failed-write-visible`, explanation: [`${label} append(s) whose fence was rejected are in the list: ${bogus.slice(0, 15).join(', ')}.`] });
    if (new Set(final).size !== final.length) into.push({ kind: `${label}-duplicate`, explanation: [`the final ${label} list repeats an element.`] });
  };
  listCheck('unfenced-add', finals.unfenced, warnings, 'unfenced');
  listCheck('fenced-add', finals.fenced, anomalies, 'fenced');
  const valid = anomalies.some((a) => a.kind === 'no-final-read') && anomalies.length === 1 ? 'unknown' : anomalies.length ? false : true;
  return { name: 'lock (fenced writes safe; exclusion reported)', valid, stats, anomalies, warnings };
}
