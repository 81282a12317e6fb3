// The npm etcd3 client (grpc-js, its own copy of etcd's protos) against the client port: KV, txn, watch,
// leases with keep-alive, lock, STM, and the errors it maps by message. Over the fake StoreApi, then on a
// real one-member `setpoint store` (store-targets.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Etcd3, EtcdLeaseInvalidError, EtcdLockFailedError, GRPCOutOfRangeError } from 'etcd3';
import { expectCasBothWays } from '../helpers/etcd3-checks.js';
import type { IKeyValue } from 'etcd3';
import { waitFor } from '../../../src/harness/wait.js';
import { STORE_TARGETS } from '../helpers/store-targets.js';
import type { StoreTarget } from '../helpers/store-targets.js';

describe.each(STORE_TARGETS)('npm etcd3 client on $name', (target) => {
  let fx: StoreTarget | undefined;
  let client: Etcd3;

  beforeAll(async () => {
    fx = await target.start();
    client = new Etcd3({ hosts: fx.endpoint });
  }, 60_000);

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
    expect(res.header).toMatchObject({ cluster_id: fx?.clusterId, member_id: fx?.memberId, raft_term: fx?.raftTerm });
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
    await waitFor('three watch events', () => seen.length >= 3);
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
    await waitFor('replayed history', () => values.length >= 2);
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
    expect(st.leader).toBe(fx?.memberId);
    const ml = await client.cluster.memberList({});
    expect(ml.members.map((m) => m.ID)).toEqual([fx?.memberId]);
  });
});
