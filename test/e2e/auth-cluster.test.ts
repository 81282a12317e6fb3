// Auth on a three-member Setpoint cluster, through the npm etcd3 client's auth options (auth: { username,
// password }): users and roles made with the client, auth enabled, a user limited to its prefix on every
// member (tokens are issued through Raft, so any member knows them), a wrong password, a stale grant, and
// the JSON gateway with the token in Authorization, and the auth state kept by a member that restarts
// and by one that catches up from a snapshot.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Etcd3, EtcdAuthenticationFailedError, EtcdPermissionDeniedError } from 'etcd3';
import { StoreCluster } from '../../src/harness/store-cluster.js';
import { waitFor } from '../../src/harness/wait.js';

const ROOT = { username: 'root', password: 'rootpw' };
const ALICE = { username: 'alice', password: 'alicepw' };

describe('auth on a three-member cluster, with the etcd3 client', () => {
  let cluster: StoreCluster | undefined;
  /** Members that logged installing a snapshot from the leader. */
  const installed = new Set<string>();
  const clients: Etcd3[] = [];
  const client = (o: { hosts?: string | string[]; auth?: { username: string; password: string } } = {}): Etcd3 => {
    if (!cluster) throw new Error('no cluster');
    const c = new Etcd3({ hosts: o.hosts ?? cluster.endpoints(), ...(o.auth ? { auth: o.auth } : {}) });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    // A small snapshot count, so a member that was away catches up from a snapshot, not from the log.
    cluster = await StoreCluster.start({ program: 'setpoint', size: 3, label: 'setpoint-auth-', snapshotCount: 20,
      flags: ['--experimental-snapshot-catchup-entries=5', '--bcrypt-cost=4'],
      onLine: (member, line) => {
        if (line.includes('installed snapshot from leader')) installed.add(member);
      },
    });
  }, 90_000);

  afterAll(async () => {
    for (const c of clients) c.close();
    await cluster?.destroy();
  });

  it('sets up users and roles, and enables auth', async () => {
    const admin = client();
    await admin.user('root').create(ROOT.password);
    await admin.user('root').addRole('root');
    await admin.role('docs').create();
    await admin.role('docs').grant({ permission: 'Readwrite', range: admin.range({ prefix: '/docs/' }) });
    await admin.role('docs').grant({ permission: 'Read', key: '/motd' });
    await admin.user(ALICE.username).create(ALICE.password);
    await admin.user(ALICE.username).addRole('docs');
    await admin.put('/motd').value('hello');
    await admin.auth.authEnable();
    await expect(admin.get('/motd').string()).rejects.toThrow('etcdserver: user name is empty');
  });

  it('lets a user do what its roles permit, on every member, and nothing else', async () => {
    if (!cluster) throw new Error('no cluster');
    for (const name of cluster.running()) {
      const alice = client({ hosts: cluster.clientUrl(name), auth: ALICE });
      await alice.put(`/docs/${name}`).value(name);
      expect(await alice.get(`/docs/${name}`).string()).toBe(name);
      expect(await alice.get('/motd').string()).toBe('hello');
      await expect(alice.put('/motd').value('x')).rejects.toBeInstanceOf(EtcdPermissionDeniedError);
      await expect(alice.get('/secret').string()).rejects.toBeInstanceOf(EtcdPermissionDeniedError);
      await expect(alice.getRoles()).rejects.toBeInstanceOf(EtcdPermissionDeniedError);
    }
    const alice = client({ auth: ALICE });
    expect(await alice.getAll().prefix('/docs/').keys()).toEqual(cluster.running().map((n) => `/docs/${n}`).sort());
    // A txn is checked op by op: a denied op in either branch refuses the whole txn.
    await expect(alice.if('/docs/n1', 'Value', '==', 'n1').then(alice.put('/docs/t').value('1')).else(alice.put('/secret').value('1')).commit()).rejects.toBeInstanceOf(
      EtcdPermissionDeniedError,
    );
  });

  it('refuses a wrong password', async () => {
    const wrong = client({ auth: { username: 'alice', password: 'nope' } });
    await expect(wrong.get('/docs/n1').string()).rejects.toBeInstanceOf(EtcdAuthenticationFailedError);
  });

  it('serves the JSON gateway with the token in Authorization, as etcd\'s gateway does', async () => {
    if (!cluster) throw new Error('no cluster');
    const url = cluster.clientUrl(cluster.running()[0] ?? '');
    const post = async (path: string, body: object, token?: string): Promise<Record<string, unknown>> => {
      const r = await fetch(`${url}${path}`, { method: 'POST', body: JSON.stringify(body), headers: token ? { authorization: token } : {} });
      return (await r.json()) as Record<string, unknown>;
    };
    const { token } = (await post('/v3/auth/authenticate', { name: ALICE.username, password: ALICE.password })) as { token: string };
    const key = Buffer.from('/motd').toString('base64');
    expect(await post('/v3/kv/range', { key })).toMatchObject({ message: 'etcdserver: user name is empty', code: 3 });
    expect(await post('/v3/kv/range', { key }, token)).toMatchObject({ kvs: [{ key, value: Buffer.from('hello').toString('base64') }] });
    expect(await post('/v3/kv/put', { key, value: key }, token)).toMatchObject({ message: 'etcdserver: permission denied', code: 7 });
  });

  it('delivers watch events on a permitted prefix', async () => {
    const alice = client({ auth: ALICE });
    const w = await alice.watch().prefix('/docs/').create();
    const seen: string[] = [];
    w.on('put', (kv) => seen.push(kv.key.toString()));
    await alice.put('/docs/watched').value('1');
    await waitFor('the watch event', () => seen.includes('/docs/watched'));
    await w.cancel();
  });

  it('applies a revoked permission to a token issued before it', async () => {
    const root = client({ auth: ROOT });
    const alice = client({ auth: ALICE });
    await alice.put('/docs/before').value('1');
    await root.role('docs').revoke({ permission: 'Readwrite', range: root.range({ prefix: '/docs/' }) });
    await expect(alice.put('/docs/after').value('1')).rejects.toBeInstanceOf(EtcdPermissionDeniedError);
    await root.role('docs').grant({ permission: 'Readwrite', range: root.range({ prefix: '/docs/' }) });
    await alice.put('/docs/after').value('1');
  });

  it('keeps users and roles across a restart and in a snapshot sent to a lagging member', async () => {
    if (!cluster) throw new Error('no cluster');
    const [first, , last] = cluster.running();
    if (!first || !last) throw new Error('three members expected');
    await cluster.stop(first);
    await cluster.restart(first);
    const root = client({ auth: ROOT });
    expect((await root.getUsers()).map((u) => u.name).sort()).toEqual(['alice', 'root']);

    // `last` is away while auth changes and enough writes go by for the others to snapshot and compact their logs.
    await cluster.stop(last);
    const others = cluster.running();
    const rootOnOthers = client({ hosts: others.map((n) => cluster?.clientUrl(n) ?? ''), auth: ROOT });
    await rootOnOthers.role('late').create();
    await rootOnOthers.role('late').grant({ permission: 'Read', key: '/late' });
    await rootOnOthers.user('alice').addRole('late');
    for (let i = 0; i < 60; i++) await rootOnOthers.put(`/fill/${i}`).value('x');
    await cluster.restart(last);
    await cluster.waitCaughtUp(last);
    expect(installed.has(last)).toBe(true);
    const aliceOnLast = client({ hosts: cluster.clientUrl(last), auth: ALICE });
    await root.put('/late').value('l');
    expect(await aliceOnLast.get('/late').string()).toBe('l');
    const rootOnLast = client({ hosts: cluster.clientUrl(last), auth: ROOT });
    // No "root" role: granting it needs no such role (etcd's rule), and the client never made one.
    expect((await rootOnLast.getRoles()).map((r) => r.name).sort()).toEqual(['docs', 'late']);
  }, 120_000);
});
