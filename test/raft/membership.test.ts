// Membership changes, one member at a time (Raft thesis §4.1): a change takes effect on each member when it
// applies the entry; only one may be pending on the leader; learners replicate without voting; a removed
// leader steps down.
import { describe, expect, it } from 'vitest';
import type { ConfChange, NodeId } from '../../src/raft/types.js';
import { RaftError } from '../../src/raft/errors.js';
import { MemoryStorage } from '../../src/raft/storage.js';
import { Cluster, bytes } from './helpers/cluster.js';

const E = 10;

function proposeCC(c: Cluster, id: NodeId, cc: ConfChange): string {
  try {
    c.raw(id).proposeConfChange(cc);
    return 'ok';
  } catch (e) {
    if (e instanceof RaftError) return e.code;
    throw e;
  }
}

/** Ticks every member for `n` ticks, stabilizing after each. */
function run(c: Cluster, n: number): void {
  for (let i = 0; i < n; i++) {
    for (const id of c.ids()) c.tick(id);
    c.stabilize();
  }
}

describe('learners', () => {
  function withLearner(): Cluster {
    const c = Cluster.bootstrap([1n, 2n, 3n], {}, [4n]);
    c.elect(1n);
    return c;
  }

  it('receive and apply the log', () => {
    const c = withLearner();
    c.proposeAndStabilize(1n, 'a');
    expect(c.get(4n).appliedData()).toEqual(['a']);
    expect(c.raw(1n).status().progress.get(4n)).toMatchObject({ isLearner: true, match: 3 });
  });

  it('do not count toward commit', () => {
    const c = withLearner();
    c.partition([1n, 4n], [2n, 3n]);
    c.proposeAndStabilize(1n, 'a');
    expect(c.raw(1n).status().progress.get(4n)?.match).toBe(3);
    expect(c.raw(1n).status().hardState.commit).toBe(2);
  });

  it('never campaign, however long they wait', () => {
    const c = withLearner();
    c.isolate(4n);
    for (let i = 0; i < 5 * E; i++) c.tick(4n);
    c.raw(4n).campaign();
    expect(c.raw(4n).status().softState.raftState).toBe('follower');
    expect(c.raw(4n).hasReady()).toBe(false);
  });

  it('are not asked for votes, and a cluster of voters elects without them', () => {
    const c = withLearner();
    c.isolate(4n);
    c.raw(2n).campaign();
    c.drain(2n);
    expect(c.inflight.filter((m) => m.type === 'vote').map((m) => m.to)).toEqual([1n, 3n]);
    c.stabilize();
    expect(c.leaders()).toEqual([2n]);
  });

  it('once promoted, count toward the quorum (3 of 4)', () => {
    const c = withLearner();
    expect(proposeCC(c, 1n, { type: 'addNode', nodeId: 4n })).toBe('ok');
    c.stabilize();
    expect(c.raw(1n).status().config).toEqual({ voters: [1n, 2n, 3n, 4n], learners: [] });
    expect(c.raw(1n).status().progress.get(4n)?.isLearner).toBe(false);
    // 1 and 4 alone are no longer a quorum; with 2 they are.
    c.partition([1n, 4n], [2n, 3n]);
    c.proposeAndStabilize(1n, 'a');
    expect(c.raw(1n).status().hardState.commit).toBe(3);
    c.heal();
    c.partition([1n, 2n, 4n], [3n]);
    c.tick(1n, 5);
    c.stabilize();
    expect(c.raw(1n).status().hardState.commit).toBe(4);
  });

  it('a voter cannot be demoted to learner by a proposal', () => {
    const c = withLearner();
    expect(proposeCC(c, 1n, { type: 'addLearner', nodeId: 2n })).toBe('RAFT_PROPOSAL_DROPPED');
  });
});

describe('adding and removing voters', () => {
  it('a new voter starts with empty storage and catches up through a snapshot', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.elect(1n);
    c.proposeAndStabilize(1n, 'a');
    expect(proposeCC(c, 1n, { type: 'addNode', nodeId: 4n })).toBe('ok');
    c.stabilize();
    c.compact(1n, 4);
    c.add(4n, new MemoryStorage());
    run(c, 5);
    expect(c.raw(4n).status().config.voters).toEqual([1n, 2n, 3n, 4n]);
    c.proposeAndStabilize(1n, 'b');
    expect(c.get(4n).appliedData()).toEqual(['a', 'b']);
  });

  it('removing a follower shrinks the quorum', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.elect(1n);
    proposeCC(c, 1n, { type: 'removeNode', nodeId: 3n });
    c.stabilize();
    expect(c.raw(1n).status().config.voters).toEqual([1n, 2n]);
    expect([...c.raw(1n).status().progress.keys()]).toEqual([1n, 2n]);
    c.nodes.delete(3n);
    c.proposeAndStabilize(1n, 'a');
    expect(c.get(2n).appliedData()).toEqual(['a']);
  });

  it('entries waiting for the removed member commit as soon as the removal applies', () => {
    const c = Cluster.bootstrap([1n, 2n]);
    c.elect(1n);
    proposeCC(c, 1n, { type: 'removeNode', nodeId: 2n });
    c.drain(1n);
    c.deliver(2n);
    c.drain(2n);
    // 'x' is appended while the removal is committed but not applied; 2 never acknowledges it.
    c.raw(1n).propose(bytes('x'));
    c.drain(1n);
    c.dropQueued(2n);
    c.deliver(1n); // 2's acknowledgement of the removal commits it
    c.drain(1n); // applying it leaves 1 as the only voter, which alone holds 'x'
    expect(c.raw(1n).status().config.voters).toEqual([1n]);
    expect(c.raw(1n).status().hardState.commit).toBe(4);
    c.drain(1n);
    expect(c.get(1n).appliedData()).toEqual(['x']);
  });

  it('a removed leader steps down when it applies the change, and can neither propose nor campaign', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.elect(1n);
    proposeCC(c, 1n, { type: 'removeNode', nodeId: 1n });
    c.stabilize();
    expect(c.raw(1n).status().softState).toEqual({ lead: 0n, raftState: 'follower' });
    expect(() => c.raw(1n).propose(bytes('x'))).toThrow(RaftError);
    c.raw(1n).campaign();
    expect(c.raw(1n).status().softState.raftState).toBe('follower');
    // The others elect a leader among themselves.
    run(c, 3 * E);
    expect(c.leaders()).toHaveLength(1);
    expect(c.leaders()[0]).not.toBe(1);
    const lead = c.leaders()[0] as NodeId;
    c.proposeAndStabilize(lead, 'after');
    expect(c.get(2n).appliedData()).toEqual(['after']);
  });

  it('a transfer to a member that is removed meanwhile is abandoned', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.elect(1n);
    c.isolate(3n);
    proposeCC(c, 1n, { type: 'removeNode', nodeId: 3n });
    c.stabilize();
    expect(c.raw(1n).status().config.voters).toEqual([1n, 2n]);
    c.raw(1n).transferLeader(3n);
    expect(c.raw(1n).status().leadTransferee).toBe(0n);
  });
});

describe('one change at a time', () => {
  it('refuses a second change until the first is applied on the leader', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.elect(1n);
    expect(proposeCC(c, 1n, { type: 'addLearner', nodeId: 4n })).toBe('ok');
    expect(proposeCC(c, 1n, { type: 'addLearner', nodeId: 5n })).toBe('RAFT_PROPOSAL_DROPPED');
    // Committed but not applied: still refused.
    c.drain(1n);
    for (const id of [2n, 3n]) {
      c.deliver(id);
      c.drain(id);
    }
    c.deliver(1n);
    expect(c.raw(1n).status().hardState.commit).toBe(3);
    expect(proposeCC(c, 1n, { type: 'addLearner', nodeId: 5n })).toBe('RAFT_PROPOSAL_DROPPED');
    c.drain(1n);
    expect(proposeCC(c, 1n, { type: 'addLearner', nodeId: 5n })).toBe('ok');
  });

  it('ordinary proposals are not held up by a pending change', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.elect(1n);
    proposeCC(c, 1n, { type: 'addLearner', nodeId: 4n });
    expect(() => c.raw(1n).propose(bytes('a'))).not.toThrow();
  });

  it('a member does not campaign while a committed conf change is unapplied', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.elect(1n);
    proposeCC(c, 1n, { type: 'addLearner', nodeId: 4n });
    c.stabilize();
    proposeCC(c, 1n, { type: 'removeNode', nodeId: 4n });
    c.drain(1n);
    c.deliver(2n);
    c.drain(2n);
    c.deliver(1n);
    c.drain(1n); // commit goes out to 2 with the next append
    c.deliver(2n);
    // 2 now knows the removal is committed, but has not handled the Ready that applies it.
    expect(c.raw(2n).status().hardState.commit).toBe(4);
    expect(c.raw(2n).status().applied).toBe(3);
    c.raw(2n).campaign();
    expect(c.raw(2n).status().softState.raftState).toBe('follower');
    c.drain(2n);
    c.raw(2n).campaign();
    expect(c.raw(2n).status().softState.raftState).toBe('candidate');
  });

  it('configuration survives a restart: replayed from the log after the snapshot', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.elect(1n);
    proposeCC(c, 1n, { type: 'addLearner', nodeId: 4n });
    c.stabilize();
    c.get(2n).restart();
    expect(c.raw(2n).status().config).toEqual({ voters: [1n, 2n, 3n], learners: [] });
    c.drain(2n);
    expect(c.raw(2n).status().config).toEqual({ voters: [1n, 2n, 3n], learners: [4n] });
    // After a compaction past the change, the snapshot carries it.
    c.compact(2n, 3);
    c.get(2n).restart();
    expect(c.raw(2n).status().config).toEqual({ voters: [1n, 2n, 3n], learners: [4n] });
  });
});
