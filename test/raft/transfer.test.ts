// Leader transfer (Raft thesis §3.10): the leader refuses proposals, catches the target up, then sends it
// timeoutNow so it campaigns at once. An unfinished transfer is abandoned after an election timeout.
import { describe, expect, it } from 'vitest';
import { RaftError } from '../../src/raft/errors.js';
import type { NodeId } from '../../src/raft/types.js';
import { Cluster, bytes } from './helpers/cluster.js';

const E = 10;

function proposeError(c: Cluster, id: NodeId, data: string): RaftError | undefined {
  try {
    c.raw(id).propose(bytes(data));
    return undefined;
  } catch (e) {
    if (e instanceof RaftError) return e;
    throw e;
  }
}

function cluster(opts: { checkQuorum?: boolean; preVote?: boolean } = {}): Cluster {
  const c = Cluster.bootstrap([1n, 2n, 3n], opts);
  c.elect(1n);
  return c;
}

describe('leader transfer', () => {
  it('hands leadership to an up-to-date follower at once', () => {
    const c = cluster();
    c.raw(1n).transferLeader(2n);
    c.drain(1n);
    expect(c.inflight.map((m) => [m.type, m.to])).toEqual([['timeoutNow', 2n]]);
    c.stabilize();
    expect(c.leaders()).toEqual([2n]);
    expect(c.raw(2n).status().hardState.term).toBe(3);
  });

  it('works through check-quorum leases and pre-vote: the target skips the pre-election, voters skip the lease', () => {
    const c = cluster({ checkQuorum: true, preVote: true });
    c.raw(1n).transferLeader(3n);
    c.stabilize();
    expect(c.leaders()).toEqual([3n]);
  });

  it('catches a lagging target up first, then sends timeoutNow', () => {
    const c = cluster();
    c.isolate(3n);
    c.proposeAndStabilize(1n, 'a');
    c.heal();
    c.raw(1n).transferLeader(3n);
    c.drain(1n);
    // Not yet: 3 is behind, so it gets an append instead.
    expect(c.inflight.map((m) => m.type)).toEqual(['app']);
    expect(c.raw(1n).status().leadTransferee).toBe(3n);
    c.stabilize();
    expect(c.leaders()).toEqual([3n]);
    expect(c.get(3n).appliedData()).toEqual(['a']);
  });

  it('refuses proposals while the transfer runs, with the current leader as hint', () => {
    const c = cluster();
    c.isolate(3n);
    c.raw(1n).transferLeader(3n);
    const err = proposeError(c, 1n, 'x');
    expect(err?.code).toBe('RAFT_PROPOSAL_DROPPED');
    expect(err?.leaderHint).toBe(1n);
  });

  it('gives up after an election timeout and takes proposals again', () => {
    const c = cluster();
    c.isolate(3n);
    c.raw(1n).transferLeader(3n);
    c.stabilize();
    c.tick(1n, E - 1);
    expect(c.raw(1n).status().leadTransferee).toBe(3n);
    c.tick(1n);
    expect(c.raw(1n).status().leadTransferee).toBe(0n);
    expect(c.leaders()).toEqual([1n]);
    expect(proposeError(c, 1n, 'x')).toBeUndefined();
  });

  it('a follower forwards the request to the leader', () => {
    const c = cluster();
    c.raw(3n).transferLeader(2n);
    c.stabilize();
    expect(c.leaders()).toEqual([2n]);
  });

  it('a new request for another target replaces the running one; a repeat for the same target is a no-op', () => {
    const c = cluster();
    c.isolate(2n);
    c.isolate(3n);
    c.raw(1n).transferLeader(2n);
    c.tick(1n, 3);
    c.raw(1n).transferLeader(2n);
    // The repeat did not restart the timeout: it still expires E ticks after the first request.
    c.tick(1n, E - 3);
    expect(c.raw(1n).status().leadTransferee).toBe(0n);
    c.raw(1n).transferLeader(2n);
    c.raw(1n).transferLeader(3n);
    expect(c.raw(1n).status().leadTransferee).toBe(3n);
  });

  it('ignores a transfer to itself, to a learner and to a non-member', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n], {}, [4n]);
    c.elect(1n);
    for (const to of [1n, 4n, 9n]) {
      c.raw(1n).transferLeader(to);
      expect(c.raw(1n).status().leadTransferee, `transfer to ${to}`).toBe(0n);
    }
    c.stabilize();
    expect(c.leaders()).toEqual([1n]);
  });

  it('is aborted when the leader steps down in the meantime', () => {
    const c = cluster();
    c.isolate(3n);
    c.raw(1n).transferLeader(3n);
    c.raw(2n).campaign();
    c.stabilize();
    expect(c.leaders()).toEqual([2n]);
    expect(c.raw(1n).status().leadTransferee).toBe(0n);
  });
});
