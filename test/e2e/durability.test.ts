// Durability with real processes: writers keep writing while members die by SIGKILL and come back. Every
// write the cluster acknowledged must be there afterwards, read linearizably through each member, and all
// members must hold the same history (HashKV at one revision).
import { describe, expect, it } from 'vitest';
import { StoreCluster } from './helpers/cluster.js';
import { expectNothingLost } from './helpers/checks.js';
import { Writers } from './helpers/writers.js';

describe('durability: acknowledged writes survive SIGKILL', () => {
  it('of a follower', async () => {
    const cluster = await StoreCluster.start();
    const writers = new Writers(cluster.client(), 'durability/follower/');
    cluster.track(writers);
    await writers.waitForAcks(100);
    const leader = await cluster.waitForLeader();
    const followers = cluster.running().filter((n) => n !== leader);
    const victim = followers[cluster.rng.int(followers.length)] as string;
    await cluster.kill(victim, 'SIGKILL');
    await writers.waitForAcks(100); // two of three still make a quorum
    await cluster.restart(victim);
    await writers.waitForAcks(100);
    await cluster.waitCaughtUp(victim);
    await expectNothingLost(cluster, writers);
  }, 90_000);

  it('of the leader', async () => {
    const cluster = await StoreCluster.start();
    const writers = new Writers(cluster.client(), 'durability/leader/');
    cluster.track(writers);
    await writers.waitForAcks(100);
    const leader = await cluster.waitForLeader();
    await cluster.kill(leader, 'SIGKILL');
    await cluster.waitForNewLeader(leader);
    await writers.waitForAcks(100);
    await cluster.restart(leader);
    await writers.waitForAcks(100);
    await cluster.waitCaughtUp(leader);
    await expectNothingLost(cluster, writers);
  }, 90_000);

  it('of all three members at once', async () => {
    const cluster = await StoreCluster.start();
    const writers = new Writers(cluster.client(), 'durability/all/');
    cluster.track(writers);
    await writers.waitForAcks(150);
    const all = cluster.running();
    await Promise.all(all.map((n) => cluster.kill(n, 'SIGKILL')));
    const before = writers.acked.size;
    await Promise.all(all.map((n) => cluster.restart(n)));
    await cluster.waitForLeader();
    await writers.waitForAcks(100);
    expect(writers.acked.size).toBeGreaterThan(before);
    await expectNothingLost(cluster, writers);
  }, 90_000);
});
