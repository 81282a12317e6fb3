// --auth-token jwt,… side by side with etcd 3.4: three members each, started with the same RS256 keys and
// flags. etcdctl with a user and password works the same; a token one member issued works on the others
// (JWT's point: no member remembers it); the token carries etcd's claims; once the auth revision moves on,
// an old token is refused with etcd's error; a token of another key, or none at all, is refused.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { etcdctl } from '../../src/harness/etcdctl.js';
import { startBoth } from '../../src/harness/store-cluster.js';
import type { StoreCluster } from '../../src/harness/store-cluster.js';
import { suiteClusters } from '../helpers/suite-clusters.js';
import { etcdCall, etcdGet, setUpRootAndAlice } from '../helpers/etcd-call.js';

describe('JWT auth tokens, as etcd 3.4 issues and checks them', () => {
  const dir = mkdtempSync(join(tmpdir(), 'setpoint-jwt-e2e-'));
  const clusters = suiteClusters();
  let etcd: StoreCluster;
  let setpoint: StoreCluster;

  /** The same call on both clusters: [etcd's answer, Setpoint's]. */
  const both = <T>(f: (c: StoreCluster) => Promise<T>): Promise<[T, T]> => Promise.all([f(etcd), f(setpoint)]);
  const ctl = (c: StoreCluster, args: string[]) => etcdctl(c.endpoints(), args);
  const token = async (url: string, name: string, password: string): Promise<string> => {
    const r = await etcdCall(url, 'Auth', 'Authenticate', { name, password });
    if (typeof r === 'string') throw new Error(`Authenticate at ${url}: ${r}`);
    return (r as { token: string }).token;
  };
  const get = (url: string, t: string): Promise<string> => etcdGet(url, 'k', { metadata: { token: t } });

  beforeAll(async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const priv = join(dir, 'jwt.key');
    const pub = join(dir, 'jwt.pub');
    writeFileSync(priv, privateKey.export({ type: 'pkcs1', format: 'pem' }));
    writeFileSync(pub, publicKey.export({ type: 'spki', format: 'pem' }));
    ({ etcd, setpoint } = await startBoth({
      names: ['a', 'b', 'c'],
      token: 'jwt-auth',
      label: 'setpoint-jwt-',
      flags: [`--auth-token=jwt,pub-key=${pub},priv-key=${priv},sign-method=RS256,ttl=10m`],
    }));
    clusters.track(etcd);
    clusters.track(setpoint);
    await both((c) => setUpRootAndAlice(c));
  }, 90_000);

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves etcdctl with a user and password as etcd does', async () => {
    for (const args of [
      ['--user', 'alice:alicepw', 'get', 'k'],
      ['--user', 'alice:alicepw', 'put', 'k', 'x'],
      ['--user', 'alice:wrong', 'get', 'k'],
      ['--user', 'root:rootpw', 'user', 'list'],
    ]) {
      const [e, s] = await both(async (c) => {
        const r = await ctl(c, args);
        // The client's JSON log lines (times, connection names) left out: what etcdctl says, and its exit code.
        return { code: r.code, stdout: r.stdout, stderr: r.stderr.split('\n').filter((l) => !l.startsWith('{')) };
      });
      expect(s, args.join(' ')).toEqual(e);
    }
  });

  it("issues etcd's claims, and a token from one member works on every other", async () => {
    const [e, s] = await both(async (c) => {
      const [a, b, cc] = c.endpoints() as [string, string, string];
      const t = await token(a, 'alice', 'alicepw');
      const claims = decodeJwt(t);
      return { keys: Object.keys(claims).sort(), username: claims['username'], revision: claims['revision'], onB: await get(b, t), onC: await get(cc, t) };
    });
    expect(e).toMatchObject({ keys: ['exp', 'revision', 'username'], username: 'alice', onB: 'v', onC: 'v' });
    expect(s).toEqual(e);
  });

  it('refuses a token issued before the auth revision moved, then a new one works', async () => {
    const [e, s] = await both(async (c) => {
      const [a, b] = c.endpoints() as [string, string, string];
      const old = await token(a, 'alice', 'alicepw');
      const before = await get(b, old);
      const r = await ctl(c, ['--user', 'root:rootpw', 'role', 'add', 'other']);
      if (r.code !== 0) throw new Error(r.stderr);
      const fresh = await token(b, 'alice', 'alicepw');
      // A write is checked as it applies: the old revision first, then the permission (alice only reads k).
      const put = async (t: string): Promise<unknown> => {
        const res = await etcdCall(b, 'KV', 'Put', { key: Buffer.from('k'), value: Buffer.from('w') }, { metadata: { token: t } });
        return typeof res === 'string' ? res : 'OK';
      };
      return { before, after: await get(b, old), putOld: await put(old), fresh: await get(b, fresh), putFresh: await put(fresh) };
    });
    expect(e).toEqual({
      before: 'v',
      after: '3 etcdserver: revision of auth store is old',
      putOld: '3 etcdserver: revision of auth store is old',
      fresh: 'v',
      putFresh: '7 etcdserver: permission denied',
    });
    expect(s).toEqual(e);
  });

  it('keeps a token good across a restart of the member that issued it and of the one asked', async () => {
    const [e, s] = await both(async (c) => {
      const [a, b] = c.endpoints() as [string, string, string];
      const t = await token(a, 'alice', 'alicepw');
      for (const n of ['a', 'b']) {
        await c.stop(n);
        // A leader known (the harness's linearizable read needs a token now).
        await c.restart(n, { wait: 'leader' });
      }
      return get(c.endpoints()[1] as string, t).then((v) => ({ sameUrl: c.endpoints()[1] === b, v }));
    });
    expect(e).toEqual({ sameUrl: true, v: 'v' });
    expect(s).toEqual(e);
  }, 90_000);

  it('refuses a token of another key, and a token that is none', async () => {
    const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const forged = await new SignJWT({ exp: Math.floor(Date.now() / 1000) + 600, revision: 100, username: 'root' }).setProtectedHeader({ alg: 'RS256', typ: 'JWT' }).sign(otherKey);
    const [e, s] = await both(async (c) => {
      const a = c.endpoints()[0] as string;
      return { forged: await get(a, forged), junk: await get(a, 'not-a-token') };
    });
    expect(e).toEqual({ forged: '16 etcdserver: invalid auth token', junk: '16 etcdserver: invalid auth token' });
    expect(s).toEqual(e);
  });
});
