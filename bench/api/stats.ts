// Percentiles and number formatting for bench:api's table.

/** The p-quantile (nearest rank) of the values; NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))] ?? NaN;
}

export interface Latencies {
  readonly p50: number;
  readonly p99: number;
  readonly count: number;
}

export function latencies(values: readonly number[]): Latencies {
  return { p50: percentile(values, 0.5), p99: percentile(values, 0.99), count: values.length };
}

export function fmt(n: number | undefined, digits = 1): string {
  if (n === undefined || Number.isNaN(n)) return '—';
  if (!Number.isFinite(n)) return 'never';
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** `p50 / p99` in ms. */
export function pair(l: Latencies | undefined, digits = 1): string {
  return l === undefined ? '—' : `${fmt(l.p50, digits)} / ${fmt(l.p99, digits)}`;
}
