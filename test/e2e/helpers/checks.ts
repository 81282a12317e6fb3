// The end-of-test checks the scenarios share: no acknowledged write lost on any member, every member's
// history identical (HashKV at one revision, as etcd's robustness tests end), the same member list everywhere.
import { isDeepStrictEqual } from 'node:util';
import { expect } from 'vitest';
import type { E2eCluster } from './cluster.js';
import { orUndefined, waitFor } from '../../../src/harness/wait.js';
import type { Writers } from './writers.js';

/**
 * Stops the writers; no read-back along the way was stale; then reads their prefix linearizably through
 * each running member and compares hashes.
 */
export async function expectNothingLost(cluster: E2eCluster, writers: Writers): Promise<void> {
  await writers.stop();
  console.log(`e2e writers: ${writers.summary()}`);
  expect(writers.acked.size).toBeGreaterThan(0);
  expect(writers.staleReads, 'reads that missed an acknowledged write').toEqual([]);
  for (const name of cluster.running()) {
    const missing = await writers.missingOn(cluster.memberClient(name));
    expect(missing.length, `${name}: ${missing.length} of ${writers.acked.size} acknowledged writes missing, e.g. ${missing.slice(0, 5).join(', ')}`).toBe(0);
  }
  await expectSameHistory(cluster);
}

export async function expectSameHistory(cluster: E2eCluster): Promise<void> {
  const { revision, byMember } = await cluster.hashes();
  const distinct = new Set([...byMember.values()].map((h) => `${h.hash}@${h.compactRevision}`));
  expect(distinct.size, `HashKV at revision ${revision} differs: ${JSON.stringify(Object.fromEntries(byMember))}`).toBe(1);
  expect(byMember.size).toBe(cluster.running().length);
}

interface ListedMember {
  readonly name: string;
  readonly id: string;
  readonly peerURLs: string[];
  readonly clientURLs: string[];
  readonly isLearner: boolean;
}

/**
 * Every running member lists exactly the cluster's members with their ids, names, URLs and roles. Member
 * lists are served locally, so each member is given time to apply the latest change. Learners are not
 * asked: like etcd 3.4's, they refuse every call but Status and serializable reads.
 */
export async function expectMemberListOnEveryMember(cluster: E2eCluster, learners: readonly string[] = []): Promise<void> {
  const want: ListedMember[] = cluster
    .names()
    .sort()
    .map((n) => ({ name: n, id: cluster.idOf(n), peerURLs: [cluster.peerUrl(n)], clientURLs: [cluster.clientUrl(n)], isLearner: learners.includes(n) }));
  for (const name of cluster.running().filter((n) => !learners.includes(n))) {
    let seen: ListedMember[] | undefined;
    await waitFor(`${name}'s member list`, async () => {
      const r = await orUndefined(cluster.memberClient(name).cluster.memberList({}));
      seen = r?.members.map((m) => ({ name: m.name, id: m.ID, peerURLs: m.peerURLs, clientURLs: m.clientURLs, isLearner: m.isLearner })).sort((a, b) => a.name.localeCompare(b.name));
      return isDeepStrictEqual(seen, want) ? true : undefined;
    }).catch(() => undefined);
    expect(seen, `member list on ${name}`).toEqual(want);
  }
}
