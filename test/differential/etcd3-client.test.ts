// The npm etcd3 client against clusters of real processes. First, the same calls on a 3-member etcd 3.4
// cluster and a 3-member Setpoint cluster must give the same results (revisions, values, txn branches —
// lease compares included, which etcdctl 3.4 cannot send: its parser panics on them). Then the client's
// main features on a Setpoint cluster: KV, the txn builder, a watch that survives a restart of the member
// it is connected to, leases kept alive, locks and elections.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Etcd3, EtcdLockFailedError } from 'etcd3';
import { expectCasBothWays } from '../server/helpers/etcd3-checks.js';
import { StoreCluster, startBoth } from '../../src/harness/store-cluster.js';
import { waitFor } from '../../src/harness/wait.js';
import { suiteClusters } from '../helpers/suite-clusters.js';

/** The same calls, in order, on one side; every result as plain data. */
async function scenario(c: Etcd3): Promise<unknown[]> {
  const out: unknown[] = [];
  const attempt = async (f: () => Promise<unknown>): Promise<void> => {
    out.push(await f().catch((e: unknown) => ({ error: (e as Error).message })));
  };
  await attempt(() => c.put('d/a').value('1').exec());
  await attempt(() => c.put('d/b').value('2').exec());
  await attempt(() => c.put('d/a').value('3').getPrevious());
  const lease = c.lease(30, { autoKeepAlive: false });
  const id = await lease.grant();
  await attempt(() => lease.put('d/l').value('leased').exec());
  await attempt(() => c.if('d/l', 'Lease', '==', id).then(c.put('d/ok').value('lease matched')).else(c.get('d/l')).commit());
  await attempt(() => c.if('d/l', 'Lease', '!=', id).then(c.put('d/no').value('x')).else(c.get('d/l'), c.get('d/a')).commit());
  await attempt(() => c.if('d/a', 'Lease', '==', 0).and('d/missing', 'Lease', '==', 0).then(c.delete().key('d/b')).commit());
  await attempt(() => c.if('d/l', 'Lease', '>', 0).and('d/a', 'Mod', '<', 100).and('d/a', 'Version', '==', 2).then(c.get('d/a')).commit());
  await attempt(() => c.if('d/a', 'Create', '==', 2).and('d/a', 'Value', '>', '2').then(c.put('d/c').value('c')).else(c.put('d/d').value('d')).commit());
  await attempt(() => c.getAll().prefix('d/').exec());
  await attempt(() => c.getAll().prefix('d/').sort('Mod', 'Descend').limit(2).exec());
  await attempt(() => lease.revoke());
  await attempt(() => c.getAll().prefix('d/').keys());
  await attempt(() => c.put('d/x').value('y').lease(id).exec());
  await attempt(() => c.put('').value('y').exec());
  await attempt(() => c.delete().prefix('d/').exec());
  return out;
}

/** Drops what legitimately differs between the two clusters: ids, terms, and who answered. */
function normalize(v: unknown, leases: Map<string, string>): unknown {
  if (Buffer.isBuffer(v)) return v.toString();
  if (Array.isArray(v)) return v.map((x) => normalize(x, leases));
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (k === 'cluster_id' || k === 'member_id' || k === 'raft_term') continue;
      if ((k === 'lease' || k === 'ID') && typeof x === 'string' && x !== '0') {
        if (!leases.has(x)) leases.set(x, `<lease${leases.size + 1}>`);
        out[k] = leases.get(x);
      } else out[k] = normalize(x, leases);
    }
    return out;
  }
  return v;
}

describe('npm etcd3 client: the same calls on etcd 3.4 and on Setpoint', () => {
  const clusters = suiteClusters();
  let etcd: StoreCluster | undefined;
  let setpoint: StoreCluster | undefined;

  beforeAll(async () => {
    const both = await startBoth({ token: 'differential', label: 'setpoint-diff-' });
    etcd = clusters.track(both.etcd);
    setpoint = clusters.track(both.setpoint);
  }, 60_000);

  it('KV, txn with lease/mod/version/create/value compares, leases: equal results', async () => {
    if (!etcd || !setpoint) throw new Error('clusters did not start');
    const run = async (cluster: StoreCluster): Promise<unknown> => {
      const c = new Etcd3({ hosts: cluster.endpoints() });
      try {
        return normalize(await scenario(c), new Map());
      } finally {
        c.close();
      }
    };
    const [theirs, ours] = await Promise.all([run(etcd), run(setpoint)]);
    if (process.env['DIFF_DUMP']) console.log(JSON.stringify(theirs));
    expect(ours).toEqual(theirs);
  }, 60_000);
});

describe('npm etcd3 client on a 3-member Setpoint cluster', () => {
  let cluster: StoreCluster | undefined;
  let client: Etcd3;
  const clients: Etcd3[] = [];
  const open = (hosts: string | string[]): Etcd3 => {
    const c = new Etcd3({ hosts });
    clients.push(c);
    return c;
  };

  const clusters = suiteClusters();

  beforeAll(async () => {
    cluster = clusters.track(await StoreCluster.start({ program: 'setpoint', token: 'differential', label: 'setpoint-diff-' }));
    client = open(cluster.endpoints());
  }, 60_000);

  afterAll(() => {
    for (const c of clients) c.close();
  });

  it('puts, gets, ranges, deletes', async () => {
    await client.put('kv/a').value('1');
    await client.put('kv/b').value('2');
    expect(await client.get('kv/a').string()).toBe('1');
    expect(await client.getAll().prefix('kv/').strings()).toEqual({ 'kv/a': '1', 'kv/b': '2' });
    expect(await client.getAll().prefix('kv/').count()).toBe(2);
    expect(await client.delete().prefix('kv/').getPrevious()).toHaveLength(2);
    expect(await client.get('kv/a').string()).toBeNull();
  });

  it('runs if/then/else transactions', async () => {
    await expectCasBothWays(client, 'tx');
  });

  it('keeps a watch across a restart of the member it is connected to, missing no event', async () => {
    if (!cluster) throw new Error('no cluster');
    const writer = open(cluster.clientUrl('n1'));
    const watching = open(cluster.clientUrl('n2'));
    const w = await watching.watch().prefix('rw/').create();
    const seen: string[] = [];
    let disconnects = 0;
    w.on('put', (kv) => seen.push(kv.value.toString()));
    w.on('disconnected', () => disconnects++);
    for (let i = 0; i < 5; i++) await writer.put(`rw/${i}`).value(String(i));
    await waitFor('the first five events', () => seen.length === 5);
    await cluster.kill('n2', 'SIGKILL');
    // Written while the watch's member is down: the watch resumes from its last revision and gets them.
    for (let i = 5; i < 10; i++) await writer.put(`rw/${i}`).value(String(i));
    await cluster.restart('n2', { wait: 'ready' });
    await waitFor('the events written during the restart', () => seen.length >= 10, { timeoutMs: 60_000 });
    expect(seen).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    expect(disconnects).toBeGreaterThan(0);
    await w.cancel();
  }, 90_000);

  it('keeps a lease alive past its TTL, and its keys go with it on revoke', async () => {
    const lease = client.lease(2);
    let renewals = 0;
    lease.on('keepaliveSucceeded', () => renewals++);
    await lease.put('ls/k').value('v');
    // Past three TTLs: only keep-alives can have kept it.
    await waitFor('four keep-alives', () => renewals >= 4, { timeoutMs: 20_000 });
    expect(await client.get('ls/k').string()).toBe('v');
    await lease.revoke();
    expect(await client.get('ls/k').string()).toBeNull();
  }, 30_000);

  it('locks: a second locker fails fast while the lock is held, and gets it once released', async () => {
    const held = await client.lock('lk').acquire();
    await expect(open(cluster?.endpoints() ?? []).lock('lk').acquire()).rejects.toBeInstanceOf(EtcdLockFailedError);
    await held.release();
    expect(await client.lock('lk').do(async () => 'ran under the lock')).toBe('ran under the lock');
  });

  it('elects: campaign, observe, resign hands leadership to the next candidate', async () => {
    const election = client.election('el', 5);
    const observer = await election.observe();
    const changes: (string | undefined)[] = [];
    observer.on('change', (v) => changes.push(v));
    const a = election.campaign('A');
    await a.wait();
    expect(await election.leader()).toBe('A');
    const b = open(cluster?.endpoints() ?? []).election('el', 5).campaign('B');
    await a.resign();
    await b.wait();
    expect(await election.leader()).toBe('B');
    await waitFor('the observer to see B', () => changes.includes('B'));
    expect(changes.filter((c) => c !== undefined)).toEqual(['A', 'B']);
    await b.resign();
    await observer.cancel();
  }, 30_000);
});
