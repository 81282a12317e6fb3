// The npm etcd3 client (grpc-js, its own copy of etcd's protos) against the client port: KV, txn, watch,
// leases with keep-alive, lock, STM, and the errors it maps by message.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Etcd3, EtcdLeaseInvalidError, EtcdLockFailedError, GRPCOutOfRangeError } from 'etcd3';
import { expectCasBothWays } from '../helpers/etcd3-checks.js';
import type { IKeyValue } from 'etcd3';
import { startFixturePort, waitFor } from '../helpers/client-port-harness.js';
import type { FixturePort } from '../helpers/client-port-harness.js';

describe('npm etcd3 client', () => {
  let fx: FixturePort | undefined;
  let client: Etcd3;

  beforeAll(async () => {
    fx = await startFixturePort();
    client = new Etcd3({ hosts: fx.endpoint });
  });

  afterAll(async () => {
    client?.close();
    await fx?.close();
  });

  it('puts, gets, ranges and deletes', async () => {
    await client.put('e3/a').value('1');
    await client.put('e3/b').value('2');
    await client.put('e3/c').value('3');
    expect(await client.get('e3/a').string()).toBe('1');
    expect(await client.getAll().prefix('e3/').strings()).toEqual({ 'e3/a': '1', 'e3/b': '2', 'e3/c': '3' });
    expect(await client.getAll().prefix('e3/').count()).toBe(3);
    expect(await client.getAll().prefix('e3/').sort('Key', 'Descend').limit(2).keys()).toEqual(['e3/c', 'e3/b']);
    const res = await client.get('e3/b').exec();
    expect(res.kvs[0]).toMatchObject({ create_revision: '3', mod_revision: '3', version: '1', lease: '0' });
    expect(res.header).toMatchObject({ cluster_id: fx?.store.clusterId, member_id: fx?.store.memberId, raft_term: '2' });
    const prev = await client.delete().key('e3/a').getPrevious();
    expect(prev.map((kv: IKeyValue) => kv.value.toString())).toEqual(['1']);
    expect(await client.get('e3/a').string()).toBeNull();
    expect((await client.delete().prefix('e3/').exec()).deleted).toBe('2');
  });

  it('runs a compare-and-swap txn both ways', async () => {
    await expectCasBothWays(client, 'cas');
  });

  it('watches a prefix: live events in order, with previous values', async () => {
    const watcher = await client.watch().prefix('wt/').withPreviousKV().create();
    const seen: string[] = [];
    watcher.on('put', (kv, prev) => seen.push(`put ${kv.key.toString()}=${kv.value.toString()} prev=${prev?.value.toString() ?? ''}`));
    watcher.on('delete', (kv, prev) => seen.push(`del ${kv.key.toString()} prev=${prev?.value.toString() ?? ''}`));
    await client.put('wt/x').value('1');
    await client.put('wt/x').value('2');
    await client.delete().key('wt/x');
    await client.put('other').value('ignored');
    await waitFor(() => seen.length >= 3, 'three watch events');
    expect(seen).toEqual(['put wt/x=1 prev=', 'put wt/x=2 prev=1', 'del wt/x prev=2']);
    await watcher.cancel();
  });

  it('resumes a watch from a past revision and reports a compacted one', async () => {
    const first = await client.put('hist').value('a').exec();
    await client.put('hist').value('b');
    const start = first.header.revision;
    const watcher = await client.watch().key('hist').startRevision(start).create();
    const values: string[] = [];
    watcher.on('put', (kv) => values.push(kv.value.toString()));
    await waitFor(() => values.length >= 2, 'replayed history');
    expect(values).toEqual(['a', 'b']);
    await watcher.cancel();

    const head = (await client.put('hist').value('c').exec()).header.revision;
    await client.put('hist').value('d');
    const kv = (client as unknown as { kv: { compact(req: { revision: string; physical: boolean }): Promise<unknown> } }).kv;
    await kv.compact({ revision: String(Number(head) + 1), physical: true });
    await expect(client.get('hist').revision(head).string()).rejects.toThrow(GRPCOutOfRangeError);
  });

  it('grants a lease, keeps it alive, and loses its keys when revoked', async () => {
    const lease = client.lease(10);
    const id = await lease.grant();
    await lease.put('leased').value('x');
    const ka = await lease.keepaliveOnce();
    expect(ka.TTL).toBe('10');
    const ttl = await (client as unknown as { leaseClient: { leaseTimeToLive(r: object): Promise<{ TTL: string; grantedTTL: string; keys: Buffer[] }> } }).leaseClient.leaseTimeToLive({ ID: id, keys: true });
    expect(ttl.grantedTTL).toBe('10');
    expect(ttl.keys.map((k) => k.toString())).toEqual(['leased']);
    await lease.revoke();
    expect(await client.get('leased').string()).toBeNull();
    await expect(client.lease(10).put('nope').value('x').exec()).resolves.toBeDefined();
  });

  it('maps an unknown lease to its lease error', async () => {
    const err = await client
      .put('bad-lease')
      .value('x')
      .lease('123456')
      .exec()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EtcdLeaseInvalidError);
  });

  it('locks, and a second locker fails fast while it is held', async () => {
    const lock = client.lock('the-lock');
    await lock.acquire();
    await expect(client.lock('the-lock').acquire()).rejects.toThrow(EtcdLockFailedError);
    await lock.release();
    await client.lock('the-lock').do(async () => undefined);
  });

  it('runs software transactions (STM) that retry on conflict', async () => {
    await client.put('stm/n').value('0');
    await Promise.all(
      Array.from({ length: 5 }, () =>
        client.stm({ retries: 20 }).transact(async (tx) => {
          const n = Number(await tx.get('stm/n').string());
          await tx.put('stm/n').value(String(n + 1));
        }),
      ),
    );
    expect(await client.get('stm/n').number()).toBe(5);
  });

  it('reads status and the member list', async () => {
    const st = await client.maintenance.status({});
    expect(st.version).toBe('3.4.23');
    expect(st.leader).toBe(fx?.store.memberId);
    const ml = await client.cluster.memberList({});
    expect(ml.members.map((m) => m.ID)).toEqual([fx?.store.memberId]);
  });
});
