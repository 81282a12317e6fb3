// Leases across a failover, with the npm etcd3 client's keep-alive: only the leader runs lease clocks, so
// when it dies the new leader must take the lease over (extending it, not expiring it) and keep renewing
// it; once keep-alives stop, the expiry is proposed through Raft and the keys go on every member together.
import { describe, expect, it } from 'vitest';
import { StoreCluster } from './helpers/cluster.js';
import { expectSameHistory } from './helpers/checks.js';
import { orUndefined, waitFor } from './helpers/wait.js';

const TTL = 3;

describe('leases across failover', () => {
  it('a kept-alive lease survives the death of the leader, then expires everywhere once released', async () => {
    const cluster = await StoreCluster.start();
    const client = cluster.client();
    const lease = client.lease(TTL);
    cluster.track({ close: () => lease.release() });
    let lost: unknown;
    lease.on('lost', (e) => (lost = e));
    let keepalives = 0;
    lease.on('keepaliveSucceeded', () => keepalives++);
    await lease.put('lease/key').value('held');
    const id = await lease.grant();

    const old = await cluster.waitForLeader();
    await cluster.kill(old, 'SIGKILL');
    const next = await cluster.waitForNewLeader(old);
    // Seven renewals after the failover (one every TTL/3 s) cover more than twice the TTL.
    const after = keepalives;
    await waitFor('keep-alives after the failover', () => (keepalives >= after + 7 ? true : undefined), 60_000);
    expect(lost).toBeUndefined();
    const ttl = await cluster.memberClient(next).leaseClient.leaseTimeToLive({ ID: id });
    expect(Number(ttl.TTL)).toBeGreaterThan(0);
    expect(Number(ttl.grantedTTL)).toBe(TTL);
    await cluster.restart(old);
    await cluster.waitCaughtUp(old);
    for (const name of cluster.running()) {
      const r = await cluster.memberClient(name).kv.range({ key: Buffer.from('lease/key'), serializable: true });
      expect(r.kvs.map((kv) => [kv.key.toString(), kv.value.toString(), kv.lease]), `on ${name}`).toEqual([['lease/key', 'held', id]]);
    }

    // No more keep-alives: the leader's clock runs out and its revocation reaches every member.
    lease.release();
    for (const name of cluster.running()) {
      await waitFor(`lease/key to expire on ${name}`, async () => {
        const r = await orUndefined(cluster.memberClient(name).kv.range({ key: Buffer.from('lease/key'), serializable: true }));
        return r?.kvs.length === 0 ? true : undefined;
      }, 60_000);
    }
    const gone = await cluster.memberClient(await cluster.waitForLeader()).leaseClient.leaseTimeToLive({ ID: id });
    expect(gone.TTL).toBe('-1');
    await expectSameHistory(cluster);
  }, 120_000);
});
