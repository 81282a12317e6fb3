// Leases across a failover, with the npm etcd3 client's keep-alive: only the leader runs lease clocks, so
// when it dies the new leader must take the lease over (extending it, not expiring it) and keep renewing
// it; once keep-alives stop, the expiry is proposed through Raft and the keys go on every member together.
import { describe, expect, it } from 'vitest';
import { startCluster } from './helpers/cluster.js';
import { expectSameHistory } from './helpers/checks.js';
import { orUndefined, waitFor } from '../../src/harness/wait.js';

const TTL = 3;

describe('leases across failover', () => {
  it('a kept-alive lease survives the death of the leader, then expires everywhere once released', async () => {
    const cluster = await startCluster();
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
    await waitFor('keep-alives after the failover', () => (keepalives >= after + 7 ? true : undefined), { timeoutMs: 60_000 });
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
      }, { timeoutMs: 60_000 });
    }
    const gone = await cluster.memberClient(await cluster.waitForLeader()).leaseClient.leaseTimeToLive({ ID: id });
    expect(gone.TTL).toBe('-1');
    await expectSameHistory(cluster);
  }, 120_000);

  it('a lease granted through a follower is known to a leader that has not applied the grant yet', async () => {
    // The leader applies each commit 1.5 s after telling its followers of it (a test-only switch), so the
    // follower answers the grant while the leader still lacks it. Renewals and TTL questions the follower
    // forwards must wait for the leader's apply, as etcd's do, not answer "no such lease" (TTL 0 ends an
    // etcd client's session at once). Slow elections keep the held-back leader in office.
    const cluster = await startCluster({ heartbeatMs: 500, electionMs: 6000, env: { SETPOINT_TEST_LEADER_APPLY_DELAY_MS: '1500', NODE_ENV: 'test' } });
    const leader = await cluster.waitForLeader();
    const follower = cluster.running().find((n) => n !== leader) ?? '';
    expect(cluster.logSince(leader)).toContain('SETPOINT_TEST_LEADER_APPLY_DELAY_MS is on');
    const client = cluster.memberClient(follower);

    const renewed = client.lease(30, { autoKeepAlive: false });
    cluster.track({ close: () => renewed.release() });
    const t0 = Date.now();
    await renewed.grant();
    const answer = await renewed.keepaliveOnce();
    expect(answer.TTL).toBe('30');
    // Both answers came back before the leader's held-back apply would have let it answer alone: the
    // renewal really waited for it.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);

    const asked = client.lease(30, { autoKeepAlive: false });
    cluster.track({ close: () => asked.release() });
    const id = await asked.grant();
    const ttl = await client.leaseClient.leaseTimeToLive({ ID: id });
    expect({ granted: ttl.grantedTTL, positive: Number(ttl.TTL) > 0 }).toEqual({ granted: '30', positive: true });
    expect(cluster.running().includes(leader) && (await cluster.leader()) === leader).toBe(true);
  }, 120_000);
});
