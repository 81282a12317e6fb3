// etcd 3.4's JWT tokens (--auth-token jwt,pub-key=…,priv-key=…,sign-method=RS256[,ttl=5m]): a token is
// signed, not remembered, so a token one member issued works on every member that has the same key, and a
// restart keeps it good until it expires. It carries its user and the auth revision it was issued at
// ("username", "revision", "exp" claims, as etcd's); every check refuses it once the auth revision has
// moved on (etcd's ErrAuthOldRevision, on which etcd's clients authenticate again). Nothing is ever
// invalidated: deleting the user or changing its password bumps the revision.
// Signing and verifying are the jose package's, with the keys read by node:crypto.
import { readFileSync } from 'node:fs';
import { createPrivateKey, createPublicKey, createSecretKey } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import { etcdError } from '../../kv/errors.js';

/** The signing methods etcd 3.4 knows (jwt-go's names). */
const METHODS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'HS256', 'HS384', 'HS512'] as const;
export type SignMethod = (typeof METHODS)[number];

/** etcd's DefaultTTL for a JWT (ttl option unset). */
export const DEFAULT_JWT_TTL_MS = 5 * 60 * 1000;

/** What --auth-token asks for. */
export type AuthTokenSpec =
  | { readonly type: 'simple' }
  | { readonly type: 'jwt'; readonly signMethod: SignMethod; readonly pubKeyFile?: string; readonly privKeyFile?: string; readonly ttlMs: number };

/** A problem with --auth-token, worded as etcd's auth package words it. */
export class AuthTokenError extends Error {}

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration, in milliseconds ("5m", "1h30m", "1.5s", "0"). */
export function parseGoDuration(s: string): number {
  if (s === '0') return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;
  let at = 0;
  let ms = 0;
  while (at < s.length) {
    re.lastIndex = at;
    const m = re.exec(s);
    if (!m) throw new AuthTokenError(`time: invalid duration "${s}"`);
    ms += Number(m[1]) * (UNITS[m[2] as string] as number);
    at = re.lastIndex;
  }
  if (s === '') throw new AuthTokenError('time: invalid duration ""');
  return ms;
}

/**
 * --auth-token as etcd 3.4 reads it (decomposeOpts, jwtOptions.Parse): the type, then `key=value` options
 * separated by commas, none twice; "jwt" needs a known sign-method. Unknown JWT options are ignored (etcd
 * logs them). Keys are read later, by JwtTokens.load.
 */
export function parseAuthToken(value: string): AuthTokenSpec {
  const [type = '', ...rest] = value.split(',');
  const opts = new Map<string, string>();
  for (const o of rest) {
    const pair = o.split('=');
    if (pair.length !== 2 || opts.has(pair[0] as string)) throw new AuthTokenError('auth: invalid auth options');
    opts.set(pair[0] as string, pair[1] as string);
  }
  if (type === 'simple') return { type: 'simple' };
  if (type !== 'jwt') throw new AuthTokenError(type === '' ? 'auth: an empty token type (etcd\'s "no auth") is not supported' : 'auth: invalid auth options');
  const ttl = opts.get('ttl') ?? '';
  let ttlMs = DEFAULT_JWT_TTL_MS;
  if (ttl !== '') {
    try {
      ttlMs = parseGoDuration(ttl);
    } catch {
      throw new AuthTokenError('auth: invalid auth options');
    }
  }
  const method = opts.get('sign-method') ?? '';
  if (!(METHODS as readonly string[]).includes(method)) throw new AuthTokenError('auth: invalid auth options');
  const pub = opts.get('pub-key') ?? '';
  const priv = opts.get('priv-key') ?? '';
  return { type: 'jwt', signMethod: method as SignMethod, ttlMs, ...(pub !== '' ? { pubKeyFile: pub } : {}), ...(priv !== '' ? { privKeyFile: priv } : {}) };
}

/** Who a token names, at the auth revision it was issued at. */
export interface JwtClaims {
  readonly username: string;
  readonly revision: number;
}

export class JwtTokens {
  private constructor(
    private readonly alg: SignMethod,
    /** undefined: a public key only, which verifies tokens but signs none (etcd's verifyOnly). */
    private readonly signKey: KeyObject | undefined,
    private readonly verifyKey: KeyObject,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /**
   * The keys of a spec, as etcd loads them: an HMAC method takes the private key file's bytes as the secret;
   * RSA and ECDSA take PEM keys, the private one for signing (and verifying with its public half, as etcd
   * does even when a public key is given too), or a public one alone to verify only.
   */
  static load(spec: Extract<AuthTokenSpec, { type: 'jwt' }>, now: () => number = Date.now): JwtTokens {
    const priv = spec.privKeyFile !== undefined ? readFileSync(spec.privKeyFile) : undefined;
    const pub = spec.pubKeyFile !== undefined ? readFileSync(spec.pubKeyFile) : undefined;
    if (spec.signMethod.startsWith('HS')) {
      if (!priv || priv.length === 0) throw new AuthTokenError('auth: missing key data');
      const secret = createSecretKey(priv);
      return new JwtTokens(spec.signMethod, secret, secret, spec.ttlMs, now);
    }
    const want = spec.signMethod.startsWith('ES') ? 'ec' : 'rsa';
    const typed = (k: KeyObject, what: string): KeyObject => {
      if (k.asymmetricKeyType !== want) throw new AuthTokenError(`auth: the ${what} key is not an ${want.toUpperCase()} key, as ${spec.signMethod} needs`);
      return k;
    };
    if (priv && priv.length > 0) {
      const key = typed(createPrivateKey(priv), 'private');
      return new JwtTokens(spec.signMethod, key, createPublicKey(key), spec.ttlMs, now);
    }
    if (pub && pub.length > 0) return new JwtTokens(spec.signMethod, undefined, typed(createPublicKey(pub), 'public'), spec.ttlMs, now);
    throw new AuthTokenError('auth: missing key data');
  }

  /** A token for `username` at auth `revision` (etcd's tokenJWT.assign). */
  async sign(username: string, revision: number): Promise<string> {
    if (!this.signKey) throw etcdError('AUTH_RAW_VERIFY_ONLY');
    const exp = Math.floor((this.now() + this.ttlMs) / 1000);
    return new SignJWT({ exp, revision, username }).setProtectedHeader({ alg: this.alg, typ: 'JWT' }).sign(this.signKey);
  }

  /** The claims of a token signed with this key and method and not expired; undefined for any other. */
  async verify(token: string): Promise<JwtClaims | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.verifyKey, { algorithms: [this.alg], currentDate: new Date(this.now()) });
      const { username, revision } = payload as { username?: unknown; revision?: unknown };
      if (typeof username !== 'string' || typeof revision !== 'number' || !Number.isSafeInteger(revision)) return undefined;
      return { username, revision };
    } catch {
      return undefined;
    }
  }
}
