// `setpoint store` takes etcd's own flags, spelled as etcd spells them, with etcd's defaults, and the
// ETCD_* environment variables etcd reads (flags win). A script that starts an etcd cluster starts a
// Setpoint one by changing only the program name.
import { parseInitialCluster } from '../member/membership.js';
import { DEFAULT_QUOTA_BYTES } from '../../kv/kv-store.js';
import { DEFAULT_MAX_CONCURRENT_STREAMS } from '../http2/limits.js';
import { AuthTokenError, parseAuthToken } from '../auth/jwt-tokens.js';
import type { AuthTokenSpec } from '../auth/jwt-tokens.js';

export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  readonly trustedCaFile?: string;
  readonly clientCertAuth: boolean;
}

export interface StoreFlags {
  readonly name: string;
  readonly dataDir: string;
  readonly listenClientUrls: string[];
  readonly advertiseClientUrls: string[];
  readonly listenPeerUrls: string[];
  readonly initialAdvertisePeerUrls: string[];
  readonly initialCluster: Map<string, string[]>;
  readonly initialClusterState: 'new' | 'existing';
  readonly initialClusterToken: string;
  readonly heartbeatInterval: number;
  readonly electionTimeout: number;
  readonly snapshotCount: number;
  readonly snapshotCatchUpEntries: number;
  readonly quotaBackendBytes: number;
  readonly maxRequestBytes: number;
  /** HTTP/2 streams a client may open at once on one connection (etcd 3.5's --max-concurrent-streams). */
  readonly maxConcurrentStreams: number;
  readonly clientTls?: TlsFiles;
  readonly peerTls?: TlsFiles;
  readonly logLevel: string;
  /** Refuse membership changes that could cost the cluster its quorum (etcd's default: on). */
  readonly strictReconfigCheck: boolean;
  /** --auth-token (simple, or jwt with its options), --auth-token-ttl (seconds, simple tokens), --bcrypt-cost. */
  readonly authToken: AuthTokenSpec;
  readonly authTokenTtl: number;
  readonly bcryptCost: number;
}

/** The flag names and their defaults, as etcd 3.4 has them. */
export const STORE_FLAG_DEFAULTS: Record<string, string> = {
  name: 'default',
  'data-dir': '',
  'listen-client-urls': 'http://localhost:2379',
  'advertise-client-urls': 'http://localhost:2379',
  'listen-peer-urls': 'http://localhost:2380',
  'initial-advertise-peer-urls': 'http://localhost:2380',
  'initial-cluster': '',
  'initial-cluster-state': 'new',
  'initial-cluster-token': 'etcd-cluster',
  'heartbeat-interval': '100',
  'election-timeout': '1000',
  'snapshot-count': '100000',
  // etcd 3.5's experimental flag (3.4 hard-codes 5000): entries kept behind a snapshot for slow followers.
  'experimental-snapshot-catchup-entries': '5000',
  'quota-backend-bytes': '0',
  'max-request-bytes': '1572864',
  // etcd 3.5's flag. etcd's default is unlimited (2^32-1); this one is bounded (http2/limits.ts says why).
  'max-concurrent-streams': String(DEFAULT_MAX_CONCURRENT_STREAMS),
  'cert-file': '',
  'key-file': '',
  'trusted-ca-file': '',
  'client-cert-auth': 'false',
  'peer-cert-file': '',
  'peer-key-file': '',
  'peer-trusted-ca-file': '',
  'peer-client-cert-auth': 'false',
  'log-level': 'info',
  'strict-reconfig-check': 'true',
  'auth-token': 'simple',
  'auth-token-ttl': '300',
  'bcrypt-cost': '10',
};

const MAX_QUOTA = 8 * 1024 * 1024 * 1024;

export class FlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FlagError';
  }
}

function urls(flag: string, v: string): string[] {
  const out = v.split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const u of out) {
    let p: URL;
    try {
      p = new URL(u);
    } catch {
      throw new FlagError(`--${flag}: "${u}" is not a URL`);
    }
    if (p.protocol !== 'http:' && p.protocol !== 'https:') throw new FlagError(`--${flag}: "${u}" must use http or https`);
    if (p.pathname !== '/' && p.pathname !== '') throw new FlagError(`--${flag}: "${u}" must not have a path`);
  }
  if (out.length === 0) throw new FlagError(`--${flag} is empty`);
  return out;
}

function int(flag: string, v: string, min: number): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min) throw new FlagError(`--${flag}: "${v}" must be an integer >= ${min}`);
  return n;
}

function bool(flag: string, v: string): boolean {
  if (v === 'true' || v === '') return true;
  if (v === 'false') return false;
  throw new FlagError(`--${flag}: "${v}" must be true or false`);
}

function tls(raw: Record<string, string>, prefix: '' | 'peer-'): TlsFiles | undefined {
  const cert = raw[`${prefix}cert-file`] ?? '';
  const key = raw[`${prefix}key-file`] ?? '';
  const ca = raw[`${prefix}trusted-ca-file`] ?? '';
  const auth = bool(`${prefix}client-cert-auth`, raw[`${prefix}client-cert-auth`] ?? 'false');
  if (cert === '' && key === '') {
    if (auth) throw new FlagError(`--${prefix}client-cert-auth needs --${prefix}cert-file and --${prefix}key-file`);
    return undefined;
  }
  if (cert === '' || key === '') throw new FlagError(`--${prefix}cert-file and --${prefix}key-file go together`);
  if (auth && ca === '') throw new FlagError(`--${prefix}client-cert-auth needs --${prefix}trusted-ca-file`);
  return { certFile: cert, keyFile: key, ...(ca !== '' ? { trustedCaFile: ca } : {}), clientCertAuth: auth };
}

/** --max-concurrent-streams: 1 to 2^32-1 (SETTINGS_MAX_CONCURRENT_STREAMS is 32 bits). */
function maxStreams(v: string): number {
  const n = int('max-concurrent-streams', v, 1);
  if (n > 0xffffffff) throw new FlagError(`--max-concurrent-streams: "${v}" must be at most 4294967295`);
  return n;
}

/** Turns raw flag values (flag name → string; ETCD_* env already merged under them) into a checked config. */
export function parseStoreFlags(raw: Record<string, string>): StoreFlags {
  const get = (k: string): string => raw[k] ?? STORE_FLAG_DEFAULTS[k] ?? '';
  const name = get('name');
  const peerUrls = urls('initial-advertise-peer-urls', get('initial-advertise-peer-urls'));
  const initial = get('initial-cluster') !== '' ? get('initial-cluster') : `${name}=${peerUrls.join(`,${name}=`)}`;
  let initialCluster: Map<string, string[]>;
  try {
    initialCluster = parseInitialCluster(initial);
  } catch (e) {
    throw new FlagError((e as Error).message);
  }
  const mine = initialCluster.get(name);
  if (!mine) throw new FlagError(`--initial-cluster has no entry for --name "${name}"`);
  if (!peerUrls.every((u) => mine.includes(u))) {
    throw new FlagError(`--initial-cluster has ${name}=${mine.join(',')} but --initial-advertise-peer-urls is ${peerUrls.join(',')}: they must match`);
  }
  const state = get('initial-cluster-state');
  if (state !== 'new' && state !== 'existing') throw new FlagError(`--initial-cluster-state: "${state}" must be new or existing`);
  const heartbeat = int('heartbeat-interval', get('heartbeat-interval'), 1);
  const election = int('election-timeout', get('election-timeout'), 1);
  if (election < 5 * heartbeat) throw new FlagError(`--election-timeout[${election}ms] should be at least as 5 times as --heartbeat-interval[${heartbeat}ms]`);
  let quota = int('quota-backend-bytes', get('quota-backend-bytes'), -1);
  if (quota <= 0) quota = DEFAULT_QUOTA_BYTES;
  if (quota > MAX_QUOTA) quota = MAX_QUOTA;
  let authToken: AuthTokenSpec;
  try {
    authToken = parseAuthToken(get('auth-token'));
  } catch (e) {
    if (e instanceof AuthTokenError) throw new FlagError(`--auth-token: "${get('auth-token')}": ${e.message}`);
    throw e;
  }
  const bcryptCost = int('bcrypt-cost', get('bcrypt-cost'), 4);
  if (bcryptCost > 31) throw new FlagError(`--bcrypt-cost: "${bcryptCost}" must be at most 31`);
  const clientTls = tls(raw, '');
  const peerTls = tls(raw, 'peer-');
  return {
    name,
    dataDir: get('data-dir') !== '' ? get('data-dir') : `${name}.etcd`,
    listenClientUrls: urls('listen-client-urls', get('listen-client-urls')),
    advertiseClientUrls: urls('advertise-client-urls', get('advertise-client-urls')),
    listenPeerUrls: urls('listen-peer-urls', get('listen-peer-urls')),
    initialAdvertisePeerUrls: peerUrls,
    initialCluster,
    initialClusterState: state,
    initialClusterToken: get('initial-cluster-token'),
    heartbeatInterval: heartbeat,
    electionTimeout: election,
    snapshotCount: int('snapshot-count', get('snapshot-count'), 1),
    snapshotCatchUpEntries: int('experimental-snapshot-catchup-entries', get('experimental-snapshot-catchup-entries'), 1),
    quotaBackendBytes: quota,
    maxRequestBytes: int('max-request-bytes', get('max-request-bytes'), 1),
    maxConcurrentStreams: maxStreams(get('max-concurrent-streams')),
    ...(clientTls ? { clientTls } : {}),
    ...(peerTls ? { peerTls } : {}),
    logLevel: get('log-level'),
    strictReconfigCheck: bool('strict-reconfig-check', get('strict-reconfig-check')),
    authToken,
    authTokenTtl: int('auth-token-ttl', get('auth-token-ttl'), 1),
    bcryptCost,
  };
}

/** ETCD_NAME=x → { name: 'x' } for every known flag, as etcd reads its environment. */
export function flagsFromEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const flag of Object.keys(STORE_FLAG_DEFAULTS)) {
    const v = env[`ETCD_${flag.toUpperCase().replace(/-/g, '_')}`];
    if (v !== undefined) out[flag] = v;
  }
  return out;
}
