// `setpoint apiserver`'s flags: kube-apiserver's names and defaults (durations as Go writes them), each
// with what it does, checked into a typed configuration. A wrong value is one readable line naming the
// flag, as Kubernetes' flag parser words it.
import { isIP } from 'node:net';
import { DEFAULT_MAX_REQUEST_BODY_BYTES } from './api-server.js';
import { DurationError, formatDurationMs, parseDurationMs } from './duration.js';

export type FlagKind = 'string' | 'int' | 'duration' | 'bool' | 'urls' | 'ip';

export interface FlagSpec {
  readonly name: string;
  readonly kind: FlagKind;
  readonly default: string;
  readonly help: string;
  readonly required?: boolean;
}

export const APISERVER_FLAGS: readonly FlagSpec[] = [
  { name: 'etcd-servers', kind: 'urls', default: '', required: true, help: 'comma-separated etcd v3 client URLs (scheme://host:port) of the store: a Setpoint store or a real etcd cluster' },
  { name: 'etcd-prefix', kind: 'string', default: '/registry', help: 'key prefix under which every object is stored (<prefix>/<resource>/<namespace>/<name>)' },
  { name: 'etcd-cafile', kind: 'string', default: '', help: 'CA bundle that the store members\' certificates must chain to (https:// etcd servers)' },
  { name: 'etcd-certfile', kind: 'string', default: '', help: 'client certificate presented to the store (PEM)' },
  { name: 'etcd-keyfile', kind: 'string', default: '', help: 'private key of --etcd-certfile (PEM)' },
  { name: 'etcd-compaction-interval', kind: 'duration', default: '5m0s', help: 'how often the store\'s history is compacted; 0 never compacts' },
  { name: 'etcd-healthcheck-timeout', kind: 'duration', default: '2s', help: 'how long the etcd health check (/readyz/etcd, /livez/etcd) waits for the store' },
  { name: 'secure-port', kind: 'int', default: '6443', help: 'port to serve HTTPS on (HTTP/2 and HTTP/1.1); 0 picks a free one' },
  { name: 'bind-address', kind: 'ip', default: '0.0.0.0', help: 'IP address to listen on (0.0.0.0 or :: for every interface)' },
  { name: 'advertise-address', kind: 'ip', default: '', help: 'IP address clients are told to reach this server at (default: --bind-address, or the host name when that is every interface)' },
  { name: 'cert-dir', kind: 'string', default: '/var/run/kubernetes', help: 'directory for the cluster CA and serving certificate made on first start when --tls-cert-file is not given (kept and reused)' },
  { name: 'tls-cert-file', kind: 'string', default: '', help: 'serving certificate (PEM, with its chain); without it one is made in --cert-dir' },
  { name: 'tls-private-key-file', kind: 'string', default: '', help: 'private key of --tls-cert-file (PEM)' },
  { name: 'client-ca-file', kind: 'string', default: '', help: 'CA bundle that authenticates client certificates (CN is the user, O the groups); default: the CA in --cert-dir when this server made its own certificates' },
  { name: 'token-auth-file', kind: 'string', default: '', help: 'static bearer tokens, one CSV line each: token,user,uid,"group1,group2"' },
  { name: 'anonymous-auth', kind: 'bool', default: 'true', help: 'let requests without credentials read /healthz, /livez, /readyz and /version (everything else needs credentials)' },
  { name: 'default-not-ready-toleration-seconds', kind: 'int', default: '300', help: 'tolerationSeconds of the node.kubernetes.io/not-ready:NoExecute toleration added to every pod that has none (DefaultTolerationSeconds)' },
  { name: 'default-unreachable-toleration-seconds', kind: 'int', default: '300', help: 'tolerationSeconds of the node.kubernetes.io/unreachable:NoExecute toleration added to every pod that has none (DefaultTolerationSeconds)' },
  { name: 'watch-cache', kind: 'bool', default: 'true', help: 'serve lists and watches from one in-memory cache per resource fed by one store watch; false sends every list and watch to the store' },
  { name: 'event-ttl', kind: 'duration', default: '1h0m0s', help: 'how long Events are kept (a store lease of this TTL)' },
  { name: 'max-requests-inflight', kind: 'int', default: '400', help: 'most read-only requests served at once; more get 429 (watches are not counted; 0: no limit)' },
  { name: 'max-mutating-requests-inflight', kind: 'int', default: '200', help: 'most mutating requests served at once; more get 429 (0: no limit)' },
  { name: 'request-timeout', kind: 'duration', default: '1m0s', help: 'longest a request may take before it is answered 504 (a request\'s ?timeout= may shorten it; watches are bounded by --min-request-timeout)' },
  { name: 'min-request-timeout', kind: 'int', default: '1800', help: 'seconds a watch lasts at least when it names no timeoutSeconds: each lasts between this and twice this' },
  { name: 'max-request-body-bytes', kind: 'int', default: String(DEFAULT_MAX_REQUEST_BODY_BYTES), help: 'largest request body accepted; a larger one gets 413' },
  { name: 'http2-max-streams-per-connection', kind: 'int', default: '0', help: 'concurrent HTTP/2 streams allowed per client connection (0: 250, Go\'s default that kube-apiserver keeps)' },
  { name: 'log-level', kind: 'string', default: 'info', help: "log level: 'debug', 'info', 'warn', 'error', 'fatal' or 'silent'" },
];

export interface ApiServerFlags {
  readonly etcd: {
    readonly servers: readonly string[];
    readonly prefix: string;
    readonly caFile?: string;
    readonly certFile?: string;
    readonly keyFile?: string;
    readonly compactionIntervalMs: number;
    readonly healthcheckTimeoutMs: number;
  };
  readonly securePort: number;
  readonly bindAddress: string;
  readonly advertiseAddress?: string;
  readonly certDir: string;
  readonly tls?: { readonly certFile: string; readonly keyFile: string };
  readonly clientCaFile?: string;
  readonly tokenAuthFile?: string;
  readonly anonymousAuth: boolean;
  readonly eventTtlSeconds: number;
  /** DefaultTolerationSeconds' two durations. */
  readonly admission: { readonly notReadyTolerationSeconds: number; readonly unreachableTolerationSeconds: number };
  readonly watchCache: boolean;
  readonly maxRequestsInflight: number;
  readonly maxMutatingRequestsInflight: number;
  readonly requestTimeoutMs: number;
  readonly minRequestTimeoutSeconds: number;
  readonly maxRequestBodyBytes: number;
  readonly http2MaxStreamsPerConnection: number;
  readonly logLevel: string;
}

export class ApiServerFlagError extends Error {
  readonly code = 'FLAG_INVALID';

  constructor(message: string) {
    super(message);
    this.name = 'ApiServerFlagError';
  }
}

const LOG_LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']);

function bad(flag: string, value: string, why: string): ApiServerFlagError {
  return new ApiServerFlagError(`invalid argument ${JSON.stringify(value)} for "--${flag}" flag: ${why}`);
}

function int(flag: string, v: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = /^-?\d+$/.test(v.trim()) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw bad(flag, v, max === Number.MAX_SAFE_INTEGER ? `must be an integer >= ${min}` : `must be an integer from ${min} to ${max}`);
  }
  return n;
}

function duration(flag: string, v: string): number {
  try {
    const ms = parseDurationMs(v);
    if (ms < 0) throw bad(flag, v, 'must not be negative');
    return ms;
  } catch (e) {
    if (e instanceof DurationError) throw bad(flag, v, e.message);
    throw e;
  }
}

function bool(flag: string, v: string): boolean {
  // strconv.ParseBool's spellings, as pflag takes them.
  if (['1', 't', 'T', 'true', 'TRUE', 'True', ''].includes(v)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(v)) return false;
  throw bad(flag, v, 'must be true or false');
}

function urls(flag: string, v: string): string[] {
  const out = v.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const wrong = out.find((u) => !/^https?:$/.test(URL.canParse(u) ? new URL(u).protocol : ''));
  if (wrong !== undefined) throw bad(flag, wrong, 'must be an http:// or https:// URL');
  return out;
}

function ip(flag: string, v: string): string {
  if (isIP(v) === 0) throw bad(flag, v, 'must be an IP address');
  return v;
}

/** Raw values (flag name → text, absent = default) into a checked configuration. Throws ApiServerFlagError. */
export function parseApiServerFlags(raw: Readonly<Record<string, string>>): ApiServerFlags {
  for (const k of Object.keys(raw)) if (!APISERVER_FLAGS.some((f) => f.name === k)) throw new ApiServerFlagError(`unknown flag: --${k}`);
  const get = (name: string): string => raw[name] ?? APISERVER_FLAGS.find((f) => f.name === name)?.default ?? '';
  const servers = urls('etcd-servers', get('etcd-servers'));
  if (servers.length === 0) throw new ApiServerFlagError('--etcd-servers must be specified');
  const certFile = get('tls-cert-file');
  const keyFile = get('tls-private-key-file');
  if ((certFile === '') !== (keyFile === '')) throw new ApiServerFlagError('--tls-cert-file and --tls-private-key-file go together');
  const etcdCert = get('etcd-certfile');
  const etcdKey = get('etcd-keyfile');
  if ((etcdCert === '') !== (etcdKey === '')) throw new ApiServerFlagError('--etcd-certfile and --etcd-keyfile go together');
  const prefix = get('etcd-prefix');
  if (!prefix.startsWith('/')) throw bad('etcd-prefix', prefix, "must start with '/'");
  const logLevel = get('log-level');
  if (!LOG_LEVELS.has(logLevel)) throw bad('log-level', logLevel, "must be one of 'debug', 'info', 'warn', 'error', 'fatal', 'silent'");
  const requestTimeoutMs = duration('request-timeout', get('request-timeout'));
  if (requestTimeoutMs <= 0) throw bad('request-timeout', get('request-timeout'), 'must be greater than 0');
  const opt = (name: string): string | undefined => (get(name) === '' ? undefined : get(name));
  const advertise = opt('advertise-address');
  const caFile = opt('etcd-cafile');
  const clientCa = opt('client-ca-file');
  const tokenFile = opt('token-auth-file');
  return {
    etcd: {
      servers,
      prefix: prefix.replace(/\/+$/, '') || '/',
      ...(caFile !== undefined ? { caFile } : {}),
      ...(etcdCert !== '' ? { certFile: etcdCert, keyFile: etcdKey } : {}),
      compactionIntervalMs: duration('etcd-compaction-interval', get('etcd-compaction-interval')),
      healthcheckTimeoutMs: duration('etcd-healthcheck-timeout', get('etcd-healthcheck-timeout')),
    },
    securePort: int('secure-port', get('secure-port'), 0, 65535),
    bindAddress: ip('bind-address', get('bind-address')),
    ...(advertise !== undefined ? { advertiseAddress: ip('advertise-address', advertise) } : {}),
    certDir: get('cert-dir'),
    ...(certFile !== '' ? { tls: { certFile, keyFile } } : {}),
    ...(clientCa !== undefined ? { clientCaFile: clientCa } : {}),
    ...(tokenFile !== undefined ? { tokenAuthFile: tokenFile } : {}),
    anonymousAuth: bool('anonymous-auth', get('anonymous-auth')),
    eventTtlSeconds: duration('event-ttl', get('event-ttl')) / 1000,
    admission: {
      notReadyTolerationSeconds: int('default-not-ready-toleration-seconds', get('default-not-ready-toleration-seconds'), 0),
      unreachableTolerationSeconds: int('default-unreachable-toleration-seconds', get('default-unreachable-toleration-seconds'), 0),
    },
    watchCache: bool('watch-cache', get('watch-cache')),
    maxRequestsInflight: int('max-requests-inflight', get('max-requests-inflight'), 0),
    maxMutatingRequestsInflight: int('max-mutating-requests-inflight', get('max-mutating-requests-inflight'), 0),
    requestTimeoutMs,
    minRequestTimeoutSeconds: int('min-request-timeout', get('min-request-timeout'), 0),
    maxRequestBodyBytes: int('max-request-body-bytes', get('max-request-body-bytes'), 1),
    http2MaxStreamsPerConnection: int('http2-max-streams-per-connection', get('http2-max-streams-per-connection'), 0, 2 ** 31 - 1),
    logLevel,
  };
}

/** How a flag's default reads in --help (durations as Go prints them). */
export function defaultForHelp(f: FlagSpec): string {
  if (f.kind === 'duration' && f.default !== '') return formatDurationMs(parseDurationMs(f.default));
  return f.default;
}
