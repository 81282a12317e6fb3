// Terminal output for a finished run: per-phase load, check verdicts and the anomalies in words.
import { replayCommand } from './report/html.js';
import type { Summary } from './runner.js';

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ')).join('\n');
}

const verdict = (v: Summary['valid']): string => (v === true ? 'valid' : v === false ? 'INVALID' : 'unknown');

export function formatSummary(s: Summary, dir: string): string {
  const out: string[] = [];
  out.push(
    table([
      ['phase', 'seconds', 'ok', 'fail', 'info', 'ok/s', 'errors', 'p50 ms', 'p99 ms'],
      ...s.phases.map((p) => [p.phase, p.seconds.toFixed(1), String(p.ok), String(p.fail), String(p.info), p.okPerSec.toFixed(1), `${(p.errorRate * 100).toFixed(1)}%`, p.p50Ms.toFixed(1), p.p99Ms.toFixed(1)]),
    ]),
  );
  out.push('');
  out.push(`peer bytes through the proxies: ${s.peerBytes.forwarded} forwarded, ${s.peerBytes.dropped} swallowed by cuts`);
  out.push(`faults: ${s.faults.length ? s.faults.map((f) => `${(f.start / 1000).toFixed(1)}s ${f.detail}`).join(' | ') : 'none'}`);
  out.push('');
  out.push(table([['check', 'result', 'details'], ...s.checks.map((c) => [c.name, verdict(c.valid), Object.entries(c.stats).map(([k, v]) => `${k}=${v}`).join(' ')])]));
  for (const c of s.checks) {
    for (const a of c.anomalies) out.push('', `✗ ${c.name}: ${a.kind}`, ...a.explanation.map((t) => `  ${t}`));
    for (const a of c.warnings ?? []) out.push('', `! ${c.name}: ${a.kind} (reported; does not fail the run)`, ...a.explanation.map((t) => `  ${t}`));
  }
  for (const n of s.notes) out.push(`note ${(n.time / 1000).toFixed(1)}s: ${n.text}`);
  out.push('', `replay: ${replayCommand(s)}`);
  out.push(`result: ${verdict(s.valid)} — report ${dir}/index.html`);
  return out.join('\n');
}
