// Leader transfer (Raft thesis §3.10): the leader refuses proposals, catches the target up, then sends it
// timeoutNow so it campaigns at once. An unfinished transfer is abandoned after an election timeout.
import { describe, expect, it } from 'vitest';
import { RaftError } from '../../src/raft/errors.js';
import { Cluster, bytes } from './helpers/cluster.js';

const E = 10;

function proposeError(c: Cluster, id: number, data: string): RaftError | undefined {
  try {
    c.raw(id).propose(bytes(data));
    return undefined;
  } catch (e) {
    if (e instanceof RaftError) return e;
    throw e;
  }
}

function cluster(opts: { checkQuorum?: boolean; preVote?: boolean } = {}): Cluster {
  const c = Cluster.bootstrap([1, 2, 3], opts);
  c.elect(1);
  return c;
}

describe('leader transfer', () => {
  it('hands leadership to an up-to-date follower at once', () => {
    const c = cluster();
    c.raw(1).transferLeader(2);
    c.drain(1);
    expect(c.inflight.map((m) => [m.type, m.to])).toEqual([['timeoutNow', 2]]);
    c.stabilize();
    expect(c.leaders()).toEqual([2]);
    expect(c.raw(2).status().hardState.term).toBe(3);
  });

  it('works through check-quorum leases and pre-vote: the target skips the pre-election, voters skip the lease', () => {
    const c = cluster({ checkQuorum: true, preVote: true });
    c.raw(1).transferLeader(3);
    c.stabilize();
    expect(c.leaders()).toEqual([3]);
  });

  it('catches a lagging target up first, then sends timeoutNow', () => {
    const c = cluster();
    c.isolate(3);
    c.proposeAndStabilize(1, 'a');
    c.heal();
    c.raw(1).transferLeader(3);
    c.drain(1);
    // Not yet: 3 is behind, so it gets an append instead.
    expect(c.inflight.map((m) => m.type)).toEqual(['app']);
    expect(c.raw(1).status().leadTransferee).toBe(3);
    c.stabilize();
    expect(c.leaders()).toEqual([3]);
    expect(c.get(3).appliedData()).toEqual(['a']);
  });

  it('refuses proposals while the transfer runs, with the current leader as hint', () => {
    const c = cluster();
    c.isolate(3);
    c.raw(1).transferLeader(3);
    const err = proposeError(c, 1, 'x');
    expect(err?.code).toBe('RAFT_PROPOSAL_DROPPED');
    expect(err?.leaderHint).toBe(1);
  });

  it('gives up after an election timeout and takes proposals again', () => {
    const c = cluster();
    c.isolate(3);
    c.raw(1).transferLeader(3);
    c.stabilize();
    c.tick(1, E - 1);
    expect(c.raw(1).status().leadTransferee).toBe(3);
    c.tick(1);
    expect(c.raw(1).status().leadTransferee).toBe(0);
    expect(c.leaders()).toEqual([1]);
    expect(proposeError(c, 1, 'x')).toBeUndefined();
  });

  it('a follower forwards the request to the leader', () => {
    const c = cluster();
    c.raw(3).transferLeader(2);
    c.stabilize();
    expect(c.leaders()).toEqual([2]);
  });

  it('a new request for another target replaces the running one; a repeat for the same target is a no-op', () => {
    const c = cluster();
    c.isolate(2);
    c.isolate(3);
    c.raw(1).transferLeader(2);
    c.tick(1, 3);
    c.raw(1).transferLeader(2);
    // The repeat did not restart the timeout: it still expires E ticks after the first request.
    c.tick(1, E - 3);
    expect(c.raw(1).status().leadTransferee).toBe(0);
    c.raw(1).transferLeader(2);
    c.raw(1).transferLeader(3);
    expect(c.raw(1).status().leadTransferee).toBe(3);
  });

  it('ignores a transfer to itself, to a learner and to a non-member', () => {
    const c = Cluster.bootstrap([1, 2, 3], {}, [4]);
    c.elect(1);
    for (const to of [1, 4, 9]) {
      c.raw(1).transferLeader(to);
      expect(c.raw(1).status().leadTransferee, `transfer to ${to}`).toBe(0);
    }
    c.stabilize();
    expect(c.leaders()).toEqual([1]);
  });

  it('is aborted when the leader steps down in the meantime', () => {
    const c = cluster();
    c.isolate(3);
    c.raw(1).transferLeader(3);
    c.raw(2).campaign();
    c.stabilize();
    expect(c.leaders()).toEqual([2]);
    expect(c.raw(1).status().leadTransferee).toBe(0);
  });
});
