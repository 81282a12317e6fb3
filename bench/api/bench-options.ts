// bench:api's scale, from argv (`--pods 1000`, `--pods=1000`) or the environment (BENCH_API_PODS=1000),
// argv winning; the defaults are issue 26's acceptance scale. Printed in the header so a table says what
// it measured.

export interface ApiBenchOptions {
  /** Sequential creates, updates and gets, each. */
  readonly ops: number;
  /** Paced write rates (writes/s), one run each. */
  readonly rates: readonly number[];
  /** How long each paced run sends for (s). */
  readonly pacedSeconds: number;
  /** Pods stored for LIST and memory. */
  readonly pods: number;
  /** LIST runs per kind (cache, consistent); the table shows the p50. */
  readonly listRuns: number;
  readonly watchers: number;
  /** Watchers per RestClient (one HTTP/2 connection each). */
  readonly watchersPerClient: number;
  /** Pod updates whose delivery is timed. */
  readonly updates: number;
  /** Pace of those updates (updates/s). */
  readonly updateRate: number;
  /** `etcd`, `setpoint` or both, in that order. */
  readonly sides: readonly ('etcd' | 'setpoint')[];
}

const DEFAULTS: Record<keyof ApiBenchOptions, string> = {
  ops: '300',
  rates: '100,500',
  pacedSeconds: '10',
  pods: '10000',
  listRuns: '5',
  watchers: '1000',
  watchersPerClient: '50',
  updates: '100',
  updateRate: '10',
  sides: 'etcd,setpoint',
};

const kebab = (k: string): string => k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const envName = (k: string): string => `BENCH_API_${kebab(k).replace(/-/g, '_').toUpperCase()}`;

/** `--flag value` or `--flag=value` from argv (the other benches read their options with it too). */
export function fromArgv(argv: readonly string[], flag: string): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    if (a === `--${flag}`) return argv[i + 1];
    if (a.startsWith(`--${flag}=`)) return a.slice(flag.length + 3);
  }
  return undefined;
}

function positive(name: string, raw: string): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`bench:api: --${kebab(name)} must be a positive number, not "${raw}"`);
  return n;
}

export function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): ApiBenchOptions {
  const raw = (k: keyof ApiBenchOptions): string => fromArgv(argv, kebab(k)) ?? env[envName(k)] ?? DEFAULTS[k];
  const num = (k: keyof ApiBenchOptions): number => Math.round(positive(k, raw(k)));
  const sides = raw('sides').split(',').map((s) => s.trim());
  for (const s of sides) if (s !== 'etcd' && s !== 'setpoint') throw new Error(`bench:api: --sides takes etcd and/or setpoint, not "${s}"`);
  return {
    ops: num('ops'),
    rates: raw('rates').split(',').map((r) => positive('rates', r)),
    pacedSeconds: positive('pacedSeconds', raw('pacedSeconds')),
    pods: num('pods'),
    listRuns: num('listRuns'),
    watchers: num('watchers'),
    watchersPerClient: num('watchersPerClient'),
    updates: num('updates'),
    updateRate: positive('updateRate', raw('updateRate')),
    sides: (['etcd', 'setpoint'] as const).filter((s) => sides.includes(s)),
  };
}

export function describeOptions(o: ApiBenchOptions): string {
  return [
    `${o.ops} sequential creates/updates/gets`,
    `paced writes at ${o.rates.join(' and ')}/s for ${o.pacedSeconds} s each`,
    `${o.pods} pods stored, ${o.listRuns} LISTs of each kind`,
    `${o.watchers} watchers (${o.watchersPerClient} per HTTP/2 client), ${o.updates} pod updates at ${o.updateRate}/s`,
  ].join('; ');
}
