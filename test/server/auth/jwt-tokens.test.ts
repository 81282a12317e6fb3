// JWT tokens as etcd 3.4 signs and checks them: the claims it writes, keys as it loads them (HMAC secret
// bytes, PEM RSA and EC keys, a public key alone verifies only), and tokens it refuses (another key,
// another method, expired, tampered).
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { JwtTokens, parseGoDuration } from '../../../src/server/auth/jwt-tokens.js';
import type { SignMethod } from '../../../src/server/auth/jwt-tokens.js';

const dir = mkdtempSync(join(tmpdir(), 'setpoint-jwt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string | Buffer): string {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
}

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const rsaPriv = write('rsa.key', rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }));
const rsaPub = write('rsa.pub', rsa.publicKey.export({ type: 'spki', format: 'pem' }));
const other = write('other.key', generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ecPriv = write('ec.key', ec.privateKey.export({ type: 'sec1', format: 'pem' }));
const secret = write('hmac.key', 'a shared secret\n');

const spec = (signMethod: SignMethod, keys: { priv?: string; pub?: string }, ttlMs = 300_000) =>
  ({ type: 'jwt', signMethod, ttlMs, ...(keys.priv ? { privKeyFile: keys.priv } : {}), ...(keys.pub ? { pubKeyFile: keys.pub } : {}) }) as const;

describe('JWT tokens', () => {
  it("signs etcd's claims (username, revision, exp after the ttl) and reads them back", async () => {
    const t = JwtTokens.load(spec('RS256', { priv: rsaPriv, pub: rsaPub }, 60_000), () => 1_700_000_000_000);
    const token = await t.sign('alice', 7);
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'RS256', typ: 'JWT' });
    expect(decodeJwt(token)).toEqual({ exp: 1_700_000_060, revision: 7, username: 'alice' });
    expect(await t.verify(token)).toEqual({ username: 'alice', revision: 7 });
  });

  it('works with every kind of key etcd takes: PS, ES, HS', async () => {
    for (const [m, priv] of [['PS384', rsaPriv], ['ES256', ecPriv], ['HS256', secret]] as const) {
      const t = JwtTokens.load(spec(m, { priv }));
      expect(await t.verify(await t.sign('bob', 3)), m).toEqual({ username: 'bob', revision: 3 });
    }
  });

  it('a public key alone verifies the tokens of its private key, and signs none', async () => {
    const signer = JwtTokens.load(spec('RS256', { priv: rsaPriv }));
    const verifier = JwtTokens.load(spec('RS256', { pub: rsaPub }));
    expect(await verifier.verify(await signer.sign('alice', 2))).toEqual({ username: 'alice', revision: 2 });
    await expect(verifier.sign('alice', 2)).rejects.toThrow('auth: token signing attempted with verify-only key');
  });

  it('refuses tokens of another key, another method, expired or tampered', async () => {
    let now = 1_700_000_000_000;
    const t = JwtTokens.load(spec('RS256', { priv: rsaPriv }, 1000), () => now);
    const token = await t.sign('alice', 2);
    expect(await JwtTokens.load(spec('RS256', { priv: other })).verify(token)).toBeUndefined();
    expect(await JwtTokens.load(spec('PS256', { priv: rsaPriv })).verify(token)).toBeUndefined();
    const [h, , s] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ exp: 1_800_000_000, revision: 2, username: 'root' })).toString('base64url');
    expect(await t.verify(`${h}.${forged}.${s}`)).toBeUndefined();
    expect(await t.verify('not a token')).toBeUndefined();
    now += 1000;
    expect(await t.verify(token)).toBeUndefined();
  });

  it('refuses keys it cannot use, as etcd does at start', () => {
    expect(() => JwtTokens.load(spec('RS256', {}))).toThrow('auth: missing key data');
    expect(() => JwtTokens.load(spec('HS256', { pub: rsaPub }))).toThrow('auth: missing key data');
    expect(() => JwtTokens.load(spec('ES256', { priv: rsaPriv }))).toThrow(/not an EC key/);
  });

  it("reads Go's durations", () => {
    expect(parseGoDuration('5m')).toBe(300_000);
    expect(parseGoDuration('1h30m10s')).toBe(5_410_000);
    expect(parseGoDuration('1.5s')).toBe(1500);
    expect(parseGoDuration('0')).toBe(0);
    for (const bad of ['', '5', 'm', '5 m', '-']) expect(() => parseGoDuration(bad), bad).toThrow('time: invalid duration');
  });
});
