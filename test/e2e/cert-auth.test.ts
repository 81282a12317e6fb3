// --client-cert-auth with auth enabled, side by side with etcd 3.4 (one member each, the same flags): what
// etcdctl does not show. A call with no token is made by its certificate's CN, except one that carries
// grpc-gateway's Grpcgateway-Accept metadata (etcd ignores the CN then); a client cannot name itself
// through Setpoint's internal header; the JSON gateway refuses a request whose certificate has a CN while
// auth is on (400), and serves it again once auth is off. etcdctl sessions: test/differential/scripts/certauth.txt.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { etcdctl } from '../../src/harness/etcdctl.js';
import { startBoth } from '../../src/harness/store-cluster.js';
import type { StoreCluster } from '../../src/harness/store-cluster.js';
import { issueCert, makeCa } from '../../src/harness/tls-files.js';
import type { TlsFiles } from '../../src/harness/tls-files.js';
import { PEER_NAME_HEADER } from '../../src/server/grpc/peer-name.js';
import { suiteClusters } from '../helpers/suite-clusters.js';
import { etcdCall, etcdGet, setUpRootAndAlice } from '../helpers/etcd-call.js';

/** A Range of one key with `cert` (KV is served on the client port's own HTTP/2 server). */
const grpcGet = (url: string, cert: TlsFiles, key: string, metadata: Record<string, string> = {}): Promise<string> => etcdGet(url, key, { tls: cert, metadata });

/** UserList (root only; relayed to grpc-js): the users, or the error. */
async function grpcUsers(url: string, cert: TlsFiles, metadata: Record<string, string> = {}): Promise<string> {
  const r = await etcdCall(url, 'Auth', 'UserList', {}, { tls: cert, metadata });
  return typeof r === 'string' ? r : (r as { users: string[] }).users.join(',');
}

/** A JSON gateway POST with `cert` (HTTPS): status, content type and body. */
function gatewayPost(url: string, cert: TlsFiles, path: string, body: object): Promise<{ status: number; type: string; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: u.hostname, port: u.port, path, method: 'POST', ca: readFileSync(cert.caFile), cert: readFileSync(cert.certFile), key: readFileSync(cert.keyFile), headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: text }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('--client-cert-auth: the certificate CN is the user, as etcd 3.4 takes it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'setpoint-certauth-'));
  const clusters = suiteClusters();
  let etcd: StoreCluster;
  let setpoint: StoreCluster;
  let member: TlsFiles;
  let root: TlsFiles;
  let alice: TlsFiles;
  let client: TlsFiles;

  /** The same call on both sides: [etcd's answer, Setpoint's answer]. */
  const both = <T>(f: (url: string) => Promise<T>): Promise<[T, T]> => Promise.all([f(etcd.endpoints()[0] as string), f(setpoint.endpoints()[0] as string)]);
  const ctl = async (c: StoreCluster, cert: TlsFiles, args: string[]): Promise<void> => {
    const r = await etcdctl(c.endpoints(), args, { tls: cert });
    if (r.code !== 0) throw new Error(`etcdctl ${args.join(' ')} on ${c.program}: ${r.stderr}`);
  };

  beforeAll(async () => {
    const ca = makeCa(dir, 'certauth-ca');
    member = issueCert(dir, 'member', ca);
    root = issueCert(dir, 'root', ca);
    alice = issueCert(dir, 'alice', ca);
    client = issueCert(dir, 'client', ca);
    ({ etcd, setpoint } = await startBoth({ names: ['a'], tls: member, clientTls: client, token: 'certauth', label: 'setpoint-certauth-', env: { NODE_NO_WARNINGS: '1' } }));
    clusters.track(etcd);
    clusters.track(setpoint);
    for (const c of [etcd, setpoint]) await setUpRootAndAlice(c, client);
  }, 90_000);

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads as the CN, or as nobody when the call carries Grpcgateway-Accept', async () => {
    const [e1, s1] = await both((u) => grpcGet(u, alice, 'k'));
    expect(e1).toBe('v');
    expect(s1).toBe(e1);
    const [e2, s2] = await both((u) => grpcGet(u, alice, 'k', { 'grpcgateway-accept': 'application/json' }));
    expect(e2).toBe('3 etcdserver: user name is empty');
    expect(s2).toBe(e2);
  });

  it('serves relayed calls as the CN too', async () => {
    const [e, s] = await both((u) => grpcUsers(u, root));
    expect(e).toBe('alice,root');
    expect(s).toBe(e);
    const [e2, s2] = await both((u) => grpcUsers(u, alice));
    expect(e2).toBe('7 etcdserver: permission denied');
    expect(s2).toBe(e2);
  });

  it('takes no name from a header a client sends', async () => {
    const [e, s] = await both((u) => grpcGet(u, client, 'k', { [PEER_NAME_HEADER]: 'root' }));
    expect(e).toBe('7 etcdserver: permission denied');
    expect(s).toBe(e);
    const [e2, s2] = await both((u) => grpcGet(u, alice, 'k', { 'grpcgateway-accept': 'application/json', [PEER_NAME_HEADER]: 'root' }));
    expect(e2).toBe('3 etcdserver: user name is empty');
    expect(s2).toBe(e2);
    const [e3, s3] = await both((u) => grpcUsers(u, alice, { 'grpcgateway-accept': 'application/json', [PEER_NAME_HEADER]: 'root' }));
    expect(e3).toBe('3 etcdserver: user name is empty');
    expect(s3).toBe(e3);
  });

  it('refuses gateway requests with a CN while auth is on, and serves them once it is off', async () => {
    const [e, s] = await both((u) => gatewayPost(u, root, '/v3/kv/range', { key: Buffer.from('k').toString('base64') }));
    expect(e).toEqual({ status: 400, type: 'text/plain; charset=utf-8', body: 'CommonName of client sending a request against gateway will be ignored and not used as expected\n' });
    expect(s).toEqual(e);
    const [eb, sb] = await both((u) => gatewayPost(u, root, '/v3beta/kv/range', { key: Buffer.from('k').toString('base64') }));
    expect(eb.status).toBe(400);
    expect(sb).toEqual(eb);
    for (const c of [etcd, setpoint]) await ctl(c, root, ['auth', 'disable']);
    const [e2, s2] = await both((u) => gatewayPost(u, root, '/v3/kv/range', { key: Buffer.from('k').toString('base64') }));
    expect(e2.status).toBe(200);
    expect(JSON.parse(s2.body).kvs).toEqual(JSON.parse(e2.body).kvs);
  });
});
