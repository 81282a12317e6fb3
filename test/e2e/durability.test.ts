// Durability with real processes: writers keep writing while members die by SIGKILL and come back. Every
// write the cluster acknowledged must be there afterwards, read linearizably through each member, and all
// members must hold the same history (HashKV at one revision).
import { describe, it } from 'vitest';
import { startCluster } from './helpers/cluster.js';
import type { E2eCluster } from './helpers/cluster.js';
import { expectNothingLost } from './helpers/checks.js';

/** Writers write; the members `pick` names die by SIGKILL and restart; nothing acknowledged is lost. */
async function survivesSigkill(prefix: string, pick: (cluster: E2eCluster, leader: string) => string[]): Promise<void> {
  const cluster = await startCluster();
  const writers = cluster.startWriters(prefix);
  await writers.waitForAcks(100);
  const victims = pick(cluster, await cluster.waitForLeader());
  await Promise.all(victims.map((v) => cluster.kill(v, 'SIGKILL')));
  if (victims.length < cluster.names().length) {
    // A quorum is left: it elects a leader if it lost its own, and writes go on.
    await cluster.waitForLeader();
    await writers.waitForAcks(100);
  }
  await Promise.all(victims.map((v) => cluster.restart(v)));
  await writers.waitForAcks(100);
  for (const v of victims) await cluster.waitCaughtUp(v);
  await expectNothingLost(cluster, writers);
}

describe('durability: acknowledged writes survive SIGKILL', () => {
  it('of a follower', async () => {
    await survivesSigkill('durability/follower/', (cluster, leader) => {
      const followers = cluster.running().filter((n) => n !== leader);
      return [followers[cluster.rng.int(followers.length)] as string];
    });
  }, 90_000);

  it('of the leader', async () => {
    await survivesSigkill('durability/leader/', (_cluster, leader) => [leader]);
  }, 90_000);

  it('of all three members at once', async () => {
    await survivesSigkill('durability/all/', (cluster) => cluster.running());
  }, 90_000);
});
