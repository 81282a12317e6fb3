// The benchmarks' printed tables: Markdown, first column left-aligned and the rest right-aligned, so a
// table pastes into the README and docs as it is.

export function markdownTable(rows: readonly (readonly string[])[]): string {
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: readonly string[]): string => `| ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`;
  return [line(rows[0] ?? []), `|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
}
