// What every checker returns: a verdict (true / false / 'unknown'), counts for the summary, and for an
// anomaly the evidence in words.

export type Verdict = true | false | 'unknown';

export interface Anomaly {
  kind: string;
  /** Sentences explaining it, smallest failing sub-history first. */
  explanation: string[];
  /** Op ids of the failing sub-history (to highlight in the report). */
  ops?: number[];
  key?: string;
}

export interface CheckResult {
  name: string;
  valid: Verdict;
  stats: Record<string, number | string>;
  anomalies: Anomaly[];
  /** Known-unsafe behaviour that is reported but does not fail the run (unfenced locks). */
  warnings?: Anomaly[];
}

export function combine(vs: Verdict[]): Verdict {
  if (vs.includes(false)) return false;
  if (vs.includes('unknown')) return 'unknown';
  return true;
}
