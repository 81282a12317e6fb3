// Membership changes under write load, as an operator makes them with etcdctl 3.4: a fourth member joins
// as a learner, is promoted once it has caught up (and not before), and an old member (the leader) is
// removed and exits, while writers keep writing. The cluster stays available, no acknowledged write is lost,
// and every member lists the same members.
import { describe, expect, it } from 'vitest';
import { StoreCluster } from './helpers/cluster.js';
import { expectMemberListOnEveryMember, expectNothingLost } from './helpers/checks.js';
import { waitFor } from './helpers/wait.js';
import { Writers } from './helpers/writers.js';

const NOT_IN_SYNC = 'can only promote a learner member which is in sync with leader';

describe('membership under write load', () => {
  it('adds a learner, promotes it, removes the leader; no write lost, member lists agree', async () => {
    const cluster = await StoreCluster.start();
    const writers = new Writers(cluster.client(), 'membership/');
    cluster.track(writers);
    await writers.waitForAcks(100);
    await expectMemberListOnEveryMember(cluster);

    // A learner that has not started yet holds nothing: promoting it is refused, whoever is asked. The
    // leader answers with etcd's error; a follower, which cannot forward the request, times out.
    await cluster.addMember('d', { learner: true, start: false });
    const leader = await cluster.waitForLeader();
    await Promise.all(
      cluster.running().map(async (name) => {
        const r = await cluster.ctl(['member', 'promote', cluster.hexIdOf('d')], [name]);
        expect(r.code, `promote through ${name}: ${r.stdout}`).not.toBe(0);
        expect(r.stderr, `promote through ${name}`).toContain(name === leader ? NOT_IN_SYNC : 'etcdserver: request timed out');
      }),
    );
    await cluster.restart('d');
    await expectMemberListOnEveryMember(cluster, ['d']);
    await writers.waitForAcks(100);

    // Once the learner has caught up, the promotion goes through (asked of voters: a learner serves no
    // cluster calls).
    const voters = cluster.running().filter((n) => n !== 'd');
    await waitFor('d to be promoted', async () => {
      const r = await cluster.ctl(['member', 'promote', cluster.hexIdOf('d')], voters);
      if (r.code === 0) return true;
      if (!r.stderr.includes(NOT_IN_SYNC)) throw new Error(`member promote failed: ${r.stderr}`);
      return undefined;
    }, 60_000, 250);
    await expectMemberListOnEveryMember(cluster);
    await writers.waitForAcks(100);

    const victim = await cluster.waitForLeader();
    const others = cluster.running().filter((n) => n !== victim);
    const removed = await cluster.ctl(['member', 'remove', cluster.hexIdOf(victim)], others);
    expect(removed.code, removed.stderr).toBe(0);
    cluster.markRemoved(victim);
    await cluster.waitForNewLeader(victim);
    // As etcd does, a member that applied its own removal stops.
    expect(await cluster.exited(victim)).toEqual({ code: 0, signal: null });
    await writers.waitForAcks(100);
    expect(cluster.running()).toHaveLength(3);
    await expectMemberListOnEveryMember(cluster);
    await expectNothingLost(cluster, writers);
  }, 150_000);
});
