// The run's report, one self-contained page (inline SVG, a few lines of inline JS, no network): the
// verdict and replay command, per-phase throughput and errors, latency over time coloured by outcome
// with fault periods shaded, throughput over time, a timeline per client, and each anomaly's smallest
// failing sub-history explained in words.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { History, OpRecord } from '../history.js';
import type { Summary } from '../runner.js';
import { perSecond } from '../stats.js';

const COLOR = { ok: '#2a9d4b', fail: '#d62828', info: '#e9a100' } as const;
const FAULT_COLORS = ['#4e79a7', '#b07aa1', '#f28e2b', '#76b7b2', '#9c755f', '#edc948', '#59a14f', '#e15759'];

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const W = 1000;
const LEFT = 60;
const RIGHT = 10;

function faultColor(kinds: string[], kind: string): string {
  return FAULT_COLORS[kinds.indexOf(kind) % FAULT_COLORS.length]!;
}

function xOf(t: number, total: number): number {
  return LEFT + (Math.max(0, t) / Math.max(1, total)) * (W - LEFT - RIGHT);
}

function shading(s: Summary, total: number, top: number, height: number, kinds: string[]): string {
  return s.faults
    .map((f) => {
      const x1 = xOf(f.start, total);
      const x2 = xOf(f.end ?? total, total);
      return `<rect class="fault" x="${x1.toFixed(1)}" y="${top}" width="${Math.max(1, x2 - x1).toFixed(1)}" height="${height}" fill="${faultColor(kinds, f.kind)}" fill-opacity="0.16"><title>${esc(`${f.kind}: ${f.detail}`)}</title></rect>`;
    })
    .join('');
}

function timeAxis(total: number, y: number): string {
  const step = total > 120_000 ? 20_000 : total > 30_000 ? 10_000 : 5000;
  let out = `<line x1="${LEFT}" y1="${y}" x2="${W - RIGHT}" y2="${y}" stroke="#999"/>`;
  for (let t = 0; t <= total; t += step) out += `<text x="${xOf(t, total).toFixed(1)}" y="${y + 14}" font-size="10" text-anchor="middle">${t / 1000}s</text>`;
  return out;
}

function opTitle(o: OpRecord): string {
  const v = (x: unknown): string => (x === undefined ? '' : JSON.stringify(x));
  return `#${o.id} p${o.process} n${o.node + 1} ${o.f} ${o.key ?? ''} ${v(o.input)} → ${o.outcome} ${v(o.output)} ${o.error ?? ''} (${(o.end - o.start).toFixed(1)} ms)`;
}

function latencyPlot(ops: OpRecord[], s: Summary, total: number, kinds: string[]): string {
  const H = 320;
  const top = 10;
  const bottom = H - 30;
  const lo = Math.log10(0.5);
  const hi = Math.log10(Math.max(1000, ...ops.map((o) => o.end - o.start)) * 1.2);
  const yOf = (ms: number): number => bottom - ((Math.log10(Math.max(0.5, ms)) - lo) / (hi - lo)) * (bottom - top);
  // Keep every failure; thin the ok points if there are very many.
  const okStride = Math.max(1, Math.ceil(ops.filter((o) => o.outcome === 'ok').length / 15_000));
  let n = 0;
  const pts = ops
    .filter((o) => o.outcome !== 'ok' || n++ % okStride === 0)
    .map((o) => `<circle data-op="${o.id}" cx="${xOf(o.start, total).toFixed(1)}" cy="${yOf(o.end - o.start).toFixed(1)}" r="1.8" fill="${COLOR[o.outcome]}"><title>${esc(opTitle(o))}</title></circle>`)
    .join('');
  let yTicks = '';
  for (let e = 0; e <= Math.ceil(hi); e++) {
    const ms = 10 ** e;
    if (Math.log10(ms) > hi) break;
    yTicks += `<line x1="${LEFT}" x2="${W - RIGHT}" y1="${yOf(ms).toFixed(1)}" y2="${yOf(ms).toFixed(1)}" stroke="#eee"/><text x="${LEFT - 4}" y="${(yOf(ms) + 3).toFixed(1)}" font-size="10" text-anchor="end">${ms >= 1000 ? `${ms / 1000}s` : `${ms}ms`}</text>`;
  }
  return `<svg id="latency" viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="latency over time">${shading(s, total, top, bottom - top, kinds)}${yTicks}${pts}${timeAxis(total, bottom)}</svg>`;
}

function throughputPlot(ops: OpRecord[], s: Summary, total: number, kinds: string[]): string {
  const H = 220;
  const top = 10;
  const bottom = H - 30;
  const series = perSecond(ops, total);
  const max = Math.max(1, ...series.ok, ...series.fail, ...series.info);
  const yOf = (v: number): number => bottom - (v / max) * (bottom - top);
  const line = (vals: number[], color: string, name: string): string =>
    `<polyline class="series-${name}" fill="none" stroke="${color}" stroke-width="1.5" points="${vals.map((v, i) => `${xOf(i * 1000 + 500, total).toFixed(1)},${yOf(v).toFixed(1)}`).join(' ')}"/>`;
  const ticks = [0, max / 2, max].map((v) => `<text x="${LEFT - 4}" y="${(yOf(v) + 3).toFixed(1)}" font-size="10" text-anchor="end">${Math.round(v)}/s</text>`).join('');
  return `<svg id="throughput" viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="throughput over time">${shading(s, total, top, bottom - top, kinds)}${ticks}${line(series.ok, COLOR.ok, 'ok')}${line(series.fail, COLOR.fail, 'fail')}${line(series.info, COLOR.info, 'info')}${timeAxis(total, bottom)}</svg>`;
}

function timelinePlot(ops: OpRecord[], s: Summary, total: number, kinds: string[], highlight: Set<number>): string {
  const workers = [...new Set(ops.map((o) => o.worker))].sort((a, b) => a - b);
  const row = 16;
  const H = workers.length * row + 40;
  const bottom = H - 30;
  const rects = ops
    .map((o) => {
      const y = 10 + workers.indexOf(o.worker) * row;
      const x1 = xOf(o.start, total);
      const x2 = xOf(o.end, total);
      const stroke = highlight.has(o.id) ? ' stroke="#000" stroke-width="1.5"' : '';
      return `<rect data-op="${o.id}" x="${x1.toFixed(1)}" y="${y}" width="${Math.max(0.8, x2 - x1).toFixed(1)}" height="${row - 4}" fill="${COLOR[o.outcome]}"${stroke}><title>${esc(opTitle(o))}</title></rect>`;
    })
    .join('');
  const labels = workers.map((w, i) => `<text x="${LEFT - 4}" y="${10 + i * row + 10}" font-size="10" text-anchor="end">${w < 0 ? 'final' : `client ${w}`}</text>`).join('');
  return `<svg id="timeline" viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="timeline per client">${shading(s, total, 6, bottom - 6, kinds)}${labels}${rects}${timeAxis(total, bottom)}</svg>`;
}

function witnessPlot(ops: OpRecord[], id: string): string {
  if (ops.length === 0) return '';
  const t0 = Math.min(...ops.map((o) => o.start));
  const t1 = Math.max(...ops.map((o) => (Number.isFinite(o.end) ? o.end : o.start)));
  const span = Math.max(1, t1 - t0);
  const row = 22;
  const H = ops.length * row + 10;
  const x = (t: number): number => 260 + ((t - t0) / span) * (W - 280);
  const body = ops
    .sort((a, b) => a.start - b.start)
    .map((o, i) => {
      const y = 5 + i * row;
      const label = `${String.fromCharCode(65 + (i % 26))}: p${o.process} ${o.f} ${o.input === undefined ? '' : JSON.stringify(o.input)} → ${o.outcome === 'ok' ? JSON.stringify(o.output ?? 'ok') : o.outcome}`;
      return `<text x="4" y="${y + 14}" font-size="11">${esc(label)}</text><rect x="${x(o.start).toFixed(1)}" y="${y}" width="${Math.max(2, x(o.end) - x(o.start)).toFixed(1)}" height="${row - 6}" fill="${COLOR[o.outcome]}"><title>${esc(opTitle(o))}</title></rect>`;
    })
    .join('');
  return `<svg class="witness" id="${id}" viewBox="0 0 ${W} ${H}" width="100%">${body}</svg>`;
}

/** The command that replays this run: same seed, so the same schedule and operation mix. */
export function replayCommand(s: Summary): string {
  const o = s.options;
  const env = Object.entries(o.env ?? {}).map(([k, v]) => ` --env ${k}=${v}`).join('');
  const extra = [
    o.concurrency === undefined ? '' : ` --concurrency ${o.concurrency}`,
    o.timeoutMs === undefined ? '' : ` --timeout ${o.timeoutMs}`,
    o.intervalMs === undefined ? '' : ` --interval ${o.intervalMs}`,
    o.serializableReads ? ' --serializable-reads' : '',
  ].join('');
  return `npm run jepsen -- --target ${o.target} --nodes ${o.nodes} --workload ${o.workload} --nemesis ${o.nemeses.join(',') || 'none'} --time ${o.timeS} --rate ${o.rate} --seed ${o.seed}${extra}${env}`;
}

const verdictText = (v: Summary['valid']): string => (v === true ? 'VALID' : v === false ? 'INVALID' : 'UNKNOWN');

export function renderReport(s: Summary, history: History): string {
  const ops = history.ops.filter((o) => Number.isFinite(o.end));
  const total = Math.max(s.durationMs, ...ops.map((o) => o.end), 1);
  const kinds = [...new Set(s.faults.map((f) => f.kind))];
  const byId = new Map(history.ops.map((o) => [o.id, o]));
  const highlight = new Set<number>();
  const anomalySections: string[] = [];
  let w = 0;
  for (const c of s.checks) {
    for (const [list, label] of [
      [c.anomalies, 'anomaly'],
      [c.warnings ?? [], 'warning (known-unsafe, does not fail the run)'],
    ] as const) {
      for (const a of list) {
        for (const id of a.ops ?? []) highlight.add(id);
        const wops = (a.ops ?? []).map((id) => byId.get(id)).filter((o): o is OpRecord => o !== undefined);
        anomalySections.push(
          `<div class="anomaly ${label === 'anomaly' ? 'bad' : 'warn'}"><h3>${esc(c.name)} — ${esc(label)}: ${esc(a.kind)}${a.key ? ` (${esc(a.key)})` : ''}</h3>` +
            a.explanation.map((t) => `<p>${esc(t)}</p>`).join('') +
            (wops.length && wops.length <= 40 ? witnessPlot(wops, `witness-${w++}`) : '') +
            '</div>',
        );
      }
    }
  }
  const legend = kinds.map((k) => `<span class="chip" style="background:${faultColor(kinds, k)}33;border-color:${faultColor(kinds, k)}">${esc(k)}</span>`).join(' ');
  const phaseRows = s.phases
    .map((p) => `<tr><td>${p.phase}</td><td>${p.seconds.toFixed(1)}</td><td>${p.ok}</td><td>${p.fail}</td><td>${p.info}</td><td>${p.okPerSec.toFixed(1)}</td><td>${(p.errorRate * 100).toFixed(1)}%</td><td>${p.p50Ms.toFixed(1)}</td><td>${p.p99Ms.toFixed(1)}</td></tr>`)
    .join('');
  const checkRows = s.checks
    .map((c) => `<tr><td>${esc(c.name)}</td><td class="v-${String(c.valid)}">${verdictText(c.valid)}</td><td>${esc(Object.entries(c.stats).map(([k, v]) => `${k}: ${v}`).join(', '))}</td></tr>`)
    .join('');
  const faultRows = s.faults
    .map((f) => `<tr><td>${(f.start / 1000).toFixed(2)}s</td><td>${f.end === undefined ? '—' : `${(f.end / 1000).toFixed(2)}s`}</td><td>${esc(f.kind)}</td><td>${esc(f.detail)}</td></tr>`)
    .join('');
  const o = s.options;
  const replay = replayCommand(s);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>jepsen-lite ${esc(s.run)}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:20px auto;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;font-size:13px}
.badge{display:inline-block;padding:4px 12px;border-radius:4px;color:#fff;font-weight:bold}
.b-true{background:#2a9d4b}.b-false{background:#d62828}.b-unknown{background:#e9a100}
.v-true{color:#2a9d4b}.v-false{color:#d62828;font-weight:bold}.v-unknown{color:#b07800}
.chip{border:1px solid;border-radius:3px;padding:1px 6px;font-size:12px}
.anomaly{border-left:4px solid #d62828;padding:4px 12px;margin:10px 0;background:#fff5f5}.anomaly.warn{border-color:#e9a100;background:#fffaf0}
code{background:#f4f4f4;padding:2px 4px}svg{border:1px solid #eee;margin:4px 0}#hover{position:sticky;top:0;background:#fff;font:12px monospace;min-height:1.4em}
</style></head><body>
<h1>jepsen-lite <span class="badge b-${String(s.valid)}" id="verdict">${verdictText(s.valid)}</span></h1>
<p>${esc(s.run)} — target <b>${esc(o.target)}</b>, ${o.nodes} nodes, workload <b>${esc(o.workload)}</b>, nemesis <b>${esc(o.nemeses.join(',') || 'none')}</b>, ${o.timeS}s at ${o.rate}/s, seed ${o.seed}${o.serializableReads ? ', <b>serializable reads (stale-read self-test)</b>' : ''}.</p>
<p>Replay: <code>${esc(replay)}</code></p>
<h2>Checks</h2><table><tr><th>check</th><th>result</th><th>details</th></tr>${checkRows}</table>
${anomalySections.length ? `<h2>Anomalies</h2>${anomalySections.join('\n')}` : ''}
<h2>Phases</h2><table><tr><th>phase</th><th>s</th><th>ok</th><th>fail</th><th>info</th><th>ok/s</th><th>errors</th><th>p50 ms</th><th>p99 ms</th></tr>${phaseRows}</table>
<p>Peer traffic through the harness proxies: ${s.peerBytes.forwarded} bytes forwarded, ${s.peerBytes.dropped} swallowed by cuts.</p>
<p>Faults: ${legend || 'none'} &nbsp; Outcomes: <span style="color:${COLOR.ok}">● ok</span> <span style="color:${COLOR.fail}">● fail</span> <span style="color:${COLOR.info}">● info (unknown)</span></p>
<div id="hover"></div>
<h2>Latency over time</h2>${latencyPlot(ops, s, total, kinds)}
<h2>Throughput over time (completions per second)</h2>${throughputPlot(ops, s, total, kinds)}
<h2>Timeline per client</h2>${timelinePlot(ops, s, total, kinds, highlight)}
<h2>Faults</h2><table><tr><th>start</th><th>end</th><th>kind</th><th>detail</th></tr>${faultRows}</table>
${s.notes.length ? `<h2>Notes</h2><ul>${s.notes.map((n) => `<li>${(n.time / 1000).toFixed(2)}s ${esc(n.text)}</li>`).join('')}</ul>` : ''}
<script>
// Hovering an operation shows its details above the plots (the <title> tooltips work too).
document.addEventListener('mouseover', function (e) {
  var t = e.target;
  if (t && t.getAttribute && t.getAttribute('data-op') !== null) {
    var title = t.querySelector('title');
    document.getElementById('hover').textContent = title ? title.textContent : '';
  }
});
</script>
</body></html>
`;
}

export function writeReport(dir: string, s: Summary, history: History): void {
  writeFileSync(path.join(dir, 'index.html'), renderReport(s, history));
}
