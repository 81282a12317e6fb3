// The loops' records as findings: each controller's latest gap, what it did, the outcome since when and how
// often; for the scheduler's record on a pending pod, its diagnosis — which plugin rejected the pod on which
// node with the numbers, and how many of its controller's pending pods could fit at all.
import { arr, int, obj, text, type Obj } from './object-fields.js';
import type { LoopRecord } from './why-source.js';
import type { Finding } from './why-types.js';

/** Node rejections shown per pod; the rest are counted. */
const NODES_SHOWN = 5;

function scalar(v: unknown): string {
  return typeof v === 'object' && v !== null ? JSON.stringify(v) : text(v);
}

/** `replicas 1/3, ready 0, available 0`: each desired field as actual/desired, then what else the loop saw. */
export function gapText(gap: LoopRecord['gap']): string {
  const desired = obj(gap.desired);
  const actual = obj(gap.actual);
  if (Object.keys(desired).length === 0 && Object.keys(actual).length === 0) return `desired ${scalar(gap.desired)}, actual ${scalar(gap.actual)}`;
  const parts = Object.keys(desired).map((k) => `${k} ${scalar(actual[k])}/${scalar(desired[k])}`);
  for (const k of Object.keys(actual)) if (!(k in desired)) parts.push(`${k} ${scalar(actual[k])}`);
  return parts.join(', ');
}

function numbers(d: Obj): string {
  const ins = arr(d.insufficient);
  if (ins.length > 0) return ins.map((r) => `${text(r.resource)} requested ${text(r.requested)}, used ${text(r.used)}, allocatable ${text(r.allocatable)}`).join('; ');
  return Object.entries(d)
    .map(([k, v]) => `${k} ${scalar(v)}`)
    .join(', ');
}

function diagnosisFindings(rec: LoopRecord): Finding[] {
  const d = obj(rec.details);
  const nodes = arr(d.nodes);
  const out: Finding[] = [];
  const who = rec.controller;
  const all = int(d.numAllNodes);
  if (all !== undefined) {
    const plugins = Object.entries(obj(d.plugins)).map(([p, n]) => `${p} on ${text(n)}`);
    out.push({ severity: 'info', source: 'loop', summary: `${who}: 0/${all} nodes feasible${plugins.length > 0 ? `; rejected by ${plugins.join(', ')}` : ''}`, evidence: { who } });
  }
  for (const n of nodes.slice(0, NODES_SHOWN)) {
    const reasons = Array.isArray(n.reasons) ? (n.reasons as unknown[]).map(text).join(', ') : '';
    const details = obj(n.details);
    const nums = Object.keys(details).length > 0 ? ` (${numbers(details)})` : '';
    out.push({ severity: 'info', source: 'loop', summary: `node ${text(n.node)}: ${text(n.plugin)}: ${reasons}${nums}`, evidence: { who } });
  }
  const more = nodes.length - Math.min(nodes.length, NODES_SHOWN) + (int(d.nodesOmitted) ?? 0);
  if (more > 0) out.push({ severity: 'info', source: 'loop', summary: `(${more} more nodes rejected it)`, evidence: { who } });
  const f = obj(d.feasibility);
  const pending = int(f.pending);
  if (pending !== undefined) {
    const limited = Object.entries(obj(f.limitedBy)).map(([r, n]) => `${r} on ${text(n)}`);
    out.push({
      severity: 'info',
      source: 'loop',
      summary: `feasibility: ${text(f.couldFit)} of ${pending} pending pods of its controller could fit now (room for ${text(f.capacity)} on ${text(f.eligibleNodes)} eligible nodes${limited.length > 0 ? `; limited by ${limited.join(', ')}` : ''})`,
      evidence: { who },
    });
  }
  return out;
}

export function loopFindings(records: readonly LoopRecord[]): Finding[] {
  const out: Finding[] = [];
  for (const r of records) {
    const gap = gapText(r.gap);
    const evidence = { time: r.since, who: r.controller, count: r.count, ...(r.message !== undefined ? { message: r.message } : {}) };
    const message = r.message !== undefined && r.message !== '' ? `: ${r.message}` : '';
    if (r.outcome === 'error') out.push({ severity: 'error', source: 'loop', summary: `${r.controller}: ${r.action} failed (${gap})${message}`, evidence });
    else if (r.outcome === 'waiting') out.push({ severity: 'warning', source: 'loop', summary: `${r.controller}: ${r.action}, waiting (${gap})${message}`, evidence });
    else out.push({ severity: 'info', source: 'loop', summary: `${r.controller}: ${r.action}, ok (${gap})`, evidence });
    if (r.outcome !== 'ok' && r.details !== undefined) out.push(...diagnosisFindings(r));
  }
  return out;
}
