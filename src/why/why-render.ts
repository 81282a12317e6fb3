// The text `setpoint why` prints: the verdict first, then the owner chain as a tree with each object's
// state and its findings (✗ error, ! warning, · info), each with its evidence (when, who, how often).
import { refText } from './why-engine.js';
import type { Finding, ObjectReport, WhyReport } from './why-types.js';

const MARK: Readonly<Record<Finding['severity'], string>> = { error: '✗', warning: '!', info: '·' };

/** `2m ago` from an ISO time, against `now`. */
export function ago(iso: string, now: number): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 120) return `${s}s ago`;
  if (s < 7200) return `${Math.round(s / 60)}m ago`;
  if (s < 172_800) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86_400)}d ago`;
}

function evidenceText(f: Finding, now: number): string {
  const parts: string[] = [];
  if (f.evidence.time !== undefined && f.evidence.time !== '') parts.push(`${f.evidence.time} (${ago(f.evidence.time, now)})`);
  if (f.evidence.who !== undefined && f.evidence.who !== '') parts.push(`by ${f.evidence.who}`);
  if (f.evidence.count !== undefined && f.evidence.count > 1) parts.push(`x${f.evidence.count}`);
  return parts.length > 0 ? `  [${parts.join(', ')}]` : '';
}

function renderNode(r: ObjectReport, indent: string, lines: string[], now: number, top: boolean): void {
  const alike = r.alike && r.alike.length > 0 ? ` — and ${r.alike.length} more alike: ${r.alike.slice(0, 5).join(', ')}${r.alike.length > 5 ? ', …' : ''}` : '';
  const state = r.state !== '' ? `: ${r.state}${r.converged ? '' : ' (not converged)'}` : '';
  lines.push(`${indent}${top ? '' : '└─ '}${refText(r.ref)}${state}${alike}`);
  const inner = top ? '   ' : `${indent}     `;
  for (const f of r.findings) lines.push(`${inner}${MARK[f.severity]} ${f.summary}${evidenceText(f, now)}`);
  for (const c of r.children) renderNode(c, top ? '  ' : `${indent}   `, lines, now, false);
}

export function renderWhy(report: WhyReport): string {
  const now = Date.parse(report.generatedAt);
  const t = report.tree;
  const lines: string[] = [`${refText(t.ref)} ${report.converged ? 'is converged' : 'is not converging'} (${t.state})${report.causes.length > 0 && !report.converged ? ', because:' : '.'}`];
  if (!report.converged) {
    for (const c of report.causes) lines.push(`  ${MARK[c.finding.severity]} ${refText(c.ref)}${c.alike > 0 ? ` (and ${c.alike} more alike)` : ''}: ${c.finding.summary}`);
    if (report.causes.length === 0) lines.push('  nothing recorded says why: no failing condition, warning event or refusal on it or below it');
  }
  lines.push('');
  renderNode(report.tree, '', lines, now, true);
  if (!report.historyRead) lines.push('', '(admission history not read: the API server did not serve the history subresource to these credentials, so which defaulter, webhook or plugin changed or refused what is not shown)');
  if (!report.loopRecordsRead) lines.push('', '(loop records not read: the API server did not serve the reconcile subresource to these credentials, so what the controllers and the scheduler last saw and did is not shown)');
  return `${lines.join('\n')}\n`;
}
