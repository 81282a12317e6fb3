// The set checker: acknowledged adds must all be in every final read (lost otherwise); elements with
// unknown outcomes may or may not be (recovered if present); nothing may appear that was never added.
import type { OpRecord } from '../history.js';
import type { CheckResult } from './result.js';

export function checkSet(ops: readonly OpRecord[], finalReads: Map<string, number[] | undefined>): CheckResult {
  const acked = new Set<number>();
  const maybe = new Set<number>();
  const failed = new Set<number>();
  for (const o of ops) {
    if (o.f !== 'add') continue;
    const e = o.input as number;
    if (o.outcome === 'ok') acked.add(e);
    else if (o.outcome === 'info') maybe.add(e);
    else failed.add(e);
  }
  const anomalies: CheckResult['anomalies'] = [];
  const stats: Record<string, number | string> = { acknowledged: acked.size, 'unknown outcome': maybe.size, failed: failed.size };
  const answered = [...finalReads].filter((r): r is [string, number[]] => r[1] !== undefined);
  if (answered.length === 0) {
    return { name: 'set (no lost writes)', valid: 'unknown', stats, anomalies: [{ kind: 'no-final-read', explanation: ['no member answered the final read'] }] };
  }
  for (const [member, read] of answered) {
    const have = new Set(read);
    const lost = [...acked].filter((e) => !have.has(e)).sort((a, b) => a - b);
    const unexpected = read.filter((e) => !acked.has(e) && !maybe.has(e));
    const recovered = read.filter((e) => maybe.has(e)).length;
    stats[`${member} read`] = read.length;
    stats[`${member} recovered`] = recovered;
    if (lost.length) {
      anomalies.push({
        kind: 'lost-write',
        explanation: [
          `${member}'s final read lacks ${lost.length} acknowledged element(s): ${lost.slice(0, 20).join(', ')}${lost.length > 20 ? ', …' : ''}.`,
          'Each was acknowledged (ok) to the client, so a linearizable read after the heal must contain it.',
        ],
        ops: ops.filter((o) => o.f === 'add' && lost.includes(o.input as number)).map((o) => o.id).slice(0, 50),
      });
    }
    if (unexpected.length) {
      anomalies.push({
        kind: 'unexpected-element',
        explanation: [`${member}'s final read contains element(s) never written or whose write certainly failed: ${unexpected.slice(0, 20).join(', ')}.`],
      });
    }
  }
  const missing = [...finalReads].filter(([, r]) => r === undefined).map(([m]) => m);
  if (missing.length) stats['no final read from'] = missing.join(' ');
  return { name: 'set (no lost writes)', valid: anomalies.length ? false : true, stats, anomalies };
}
