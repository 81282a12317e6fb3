// Durations as Go writes and reads them (time.ParseDuration, Duration.String), because Kubernetes' flags
// (--request-timeout=1m0s, --event-ttl=1h) and its `?timeout=32s` query parameter are Go durations, and a
// user's scripts pass them to us unchanged. Errors carry Go's exact text: the API server quotes them back.

const UNIT_NS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  'µs': 1e3, // U+00B5 micro sign
  'μs': 1e3, // U+03BC Greek mu
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

/** Go's int64 nanoseconds bound (2^63 - 1): a longer duration is invalid, as in Go. */
const MAX_NS = 2 ** 63;

export class DurationError extends Error {
  readonly code = 'DURATION_INVALID';

  constructor(message: string) {
    super(message);
    this.name = 'DurationError';
  }
}

function quote(s: string): string {
  return JSON.stringify(s);
}

/** time.ParseDuration, in nanoseconds: "300ms", "-1.5h", "2h45m", "0". Throws DurationError with Go's message. */
export function parseDurationNs(input: string): number {
  const invalid = (): DurationError => new DurationError(`time: invalid duration ${quote(input)}`);
  let s = input;
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    if (s[0] === '-') sign = -1;
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') throw invalid();
  let total = 0;
  while (s !== '') {
    const num = /^(\d*)(?:\.(\d*))?/.exec(s);
    const whole = num?.[1] ?? '';
    const frac = num?.[2];
    // A component needs a digit on one side of the point at least ("." and ".s" are invalid).
    if (whole === '' && (frac === undefined || frac === '')) throw invalid();
    s = s.slice(num?.[0].length ?? 0);
    const unitMatch = /^[^\d.]+/.exec(s);
    if (!unitMatch) throw new DurationError(`time: missing unit in duration ${quote(input)}`);
    const unit = unitMatch[0];
    const perUnit = UNIT_NS[unit];
    if (perUnit === undefined) throw new DurationError(`time: unknown unit ${quote(unit)} in duration ${quote(input)}`);
    s = s.slice(unit.length);
    total += Number(`${whole === '' ? '0' : whole}.${frac ?? '0'}`) * perUnit;
    if (total >= MAX_NS) throw invalid();
  }
  return sign * Math.round(total);
}

/** parseDurationNs in milliseconds (what Node's timers take). */
export function parseDurationMs(input: string): number {
  return parseDurationNs(input) / 1e6;
}

/** Go's fractional part: up to `digits` digits, trailing zeros dropped, no point when nothing is left. */
function fraction(value: number, digits: number): string {
  const scaled = Math.round(value * 10 ** digits);
  const whole = Math.floor(scaled / 10 ** digits);
  const rest = scaled % 10 ** digits;
  if (rest === 0) return String(whole);
  return `${whole}.${String(rest).padStart(digits, '0').replace(/0+$/, '')}`;
}

/** Duration.String(): 0s, 500ms, 1.5µs, 30s, 5m0s, 1h0m0s, 1h30m2.5s. */
export function formatDurationNs(ns: number): string {
  if (ns === 0) return '0s';
  const neg = ns < 0;
  let d = Math.abs(Math.round(ns));
  let out: string;
  if (d < 1e3) out = `${d}ns`;
  else if (d < 1e6) out = `${fraction(d / 1e3, 3)}µs`;
  else if (d < 1e9) out = `${fraction(d / 1e6, 6)}ms`;
  else {
    const h = Math.floor(d / 3600e9);
    d -= h * 3600e9;
    const m = Math.floor(d / 60e9);
    d -= m * 60e9;
    const sec = `${fraction(d / 1e9, 9)}s`;
    out = h > 0 ? `${h}h${m}m${sec}` : m > 0 ? `${m}m${sec}` : sec;
  }
  return neg ? `-${out}` : out;
}

export function formatDurationMs(ms: number): string {
  return formatDurationNs(ms * 1e6);
}
