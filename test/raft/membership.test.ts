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
    const c = Cluster.bootstrap([1, 2, 3], {}, [4]);
    c.elect(1);
    return c;
  }

  it('receive and apply the log', () => {
    const c = withLearner();
    c.proposeAndStabilize(1, 'a');
    expect(c.get(4).appliedData()).toEqual(['a']);
    expect(c.raw(1).status().progress.get(4)).toMatchObject({ isLearner: true, match: 3 });
  });

  it('do not count toward commit', () => {
    const c = withLearner();
    c.partition([1, 4], [2, 3]);
    c.proposeAndStabilize(1, 'a');
    expect(c.raw(1).status().progress.get(4)?.match).toBe(3);
    expect(c.raw(1).status().hardState.commit).toBe(2);
  });

  it('never campaign, however long they wait', () => {
    const c = withLearner();
    c.isolate(4);
    for (let i = 0; i < 5 * E; i++) c.tick(4);
    c.raw(4).campaign();
    expect(c.raw(4).status().softState.raftState).toBe('follower');
    expect(c.raw(4).hasReady()).toBe(false);
  });

  it('are not asked for votes, and a cluster of voters elects without them', () => {
    const c = withLearner();
    c.isolate(4);
    c.raw(2).campaign();
    c.drain(2);
    expect(c.inflight.filter((m) => m.type === 'vote').map((m) => m.to)).toEqual([1, 3]);
    c.stabilize();
    expect(c.leaders()).toEqual([2]);
  });

  it('once promoted, count toward the quorum (3 of 4)', () => {
    const c = withLearner();
    expect(proposeCC(c, 1, { type: 'addNode', nodeId: 4 })).toBe('ok');
    c.stabilize();
    expect(c.raw(1).status().config).toEqual({ voters: [1, 2, 3, 4], learners: [] });
    expect(c.raw(1).status().progress.get(4)?.isLearner).toBe(false);
    // 1 and 4 alone are no longer a quorum; with 2 they are.
    c.partition([1, 4], [2, 3]);
    c.proposeAndStabilize(1, 'a');
    expect(c.raw(1).status().hardState.commit).toBe(3);
    c.heal();
    c.partition([1, 2, 4], [3]);
    c.tick(1, 5);
    c.stabilize();
    expect(c.raw(1).status().hardState.commit).toBe(4);
  });

  it('a voter cannot be demoted to learner by a proposal', () => {
    const c = withLearner();
    expect(proposeCC(c, 1, { type: 'addLearner', nodeId: 2 })).toBe('RAFT_PROPOSAL_DROPPED');
  });
});

describe('adding and removing voters', () => {
  it('a new voter starts with empty storage and catches up through a snapshot', () => {
    const c = Cluster.bootstrap([1, 2, 3]);
    c.elect(1);
    c.proposeAndStabilize(1, 'a');
    expect(proposeCC(c, 1, { type: 'addNode', nodeId: 4 })).toBe('ok');
    c.stabilize();
    c.compact(1, 4);
    c.add(4, new MemoryStorage());
    run(c, 5);
    expect(c.raw(4).status().config.voters).toEqual([1, 2, 3, 4]);
    c.proposeAndStabilize(1, 'b');
    expect(c.get(4).appliedData()).toEqual(['a', 'b']);
  });

  it('removing a follower shrinks the quorum', () => {
    const c = Cluster.bootstrap([1, 2, 3]);
    c.elect(1);
    proposeCC(c, 1, { type: 'removeNode', nodeId: 3 });
    c.stabilize();
    expect(c.raw(1).status().config.voters).toEqual([1, 2]);
    expect([...c.raw(1).status().progress.keys()]).toEqual([1, 2]);
    c.nodes.delete(3);
    c.proposeAndStabilize(1, 'a');
    expect(c.get(2).appliedData()).toEqual(['a']);
  });

  it('entries waiting for the removed member commit as soon as the removal applies', () => {
    const c = Cluster.bootstrap([1, 2]);
    c.elect(1);
    proposeCC(c, 1, { type: 'removeNode', nodeId: 2 });
    c.drain(1);
    c.deliver(2);
    c.drain(2);
    // 'x' is appended while the removal is committed but not applied; 2 never acknowledges it.
    c.raw(1).propose(bytes('x'));
    c.drain(1);
    c.dropQueued(2);
    c.deliver(1); // 2's acknowledgement of the removal commits it
    c.drain(1); // applying it leaves 1 as the only voter, which alone holds 'x'
    expect(c.raw(1).status().config.voters).toEqual([1]);
    expect(c.raw(1).status().hardState.commit).toBe(4);
    c.drain(1);
    expect(c.get(1).appliedData()).toEqual(['x']);
  });

  it('a removed leader steps down when it applies the change, and can neither propose nor campaign', () => {
    const c = Cluster.bootstrap([1, 2, 3]);
    c.elect(1);
    proposeCC(c, 1, { type: 'removeNode', nodeId: 1 });
    c.stabilize();
    expect(c.raw(1).status().softState).toEqual({ lead: 0, raftState: 'follower' });
    expect(() => c.raw(1).propose(bytes('x'))).toThrow(RaftError);
    c.raw(1).campaign();
    expect(c.raw(1).status().softState.raftState).toBe('follower');
    // The others elect a leader among themselves.
    run(c, 3 * E);
    expect(c.leaders()).toHaveLength(1);
    expect(c.leaders()[0]).not.toBe(1);
    const lead = c.leaders()[0] as NodeId;
    c.proposeAndStabilize(lead, 'after');
    expect(c.get(2).appliedData()).toEqual(['after']);
  });

  it('a transfer to a member that is removed meanwhile is abandoned', () => {
    const c = Cluster.bootstrap([1, 2, 3]);
    c.elect(1);
    c.isolate(3);
    proposeCC(c, 1, { type: 'removeNode', nodeId: 3 });
    c.stabilize();
    expect(c.raw(1).status().config.voters).toEqual([1, 2]);
    c.raw(1).transferLeader(3);
    expect(c.raw(1).status().leadTransferee).toBe(0);
  });
});

describe('one change at a time', () => {
  it('refuses a second change until the first is applied on the leader', () => {
    const c = Cluster.bootstrap([1, 2, 3]);
    c.elect(1);
    expect(proposeCC(c, 1, { type: 'addLearner', nodeId: 4 })).toBe('ok');
    expect(proposeCC(c, 1, { type: 'addLearner', nodeId: 5 })).toBe('RAFT_PROPOSAL_DROPPED');
    // Committed but not applied: still refused.
    c.drain(1);
    for (const id of [2, 3]) {
      c.deliver(id);
      c.drain(id);
    }
    c.deliver(1);
    expect(c.raw(1).status().hardState.commit).toBe(3);
    expect(proposeCC(c, 1, { type: 'addLearner', nodeId: 5 })).toBe('RAFT_PROPOSAL_DROPPED');
    c.drain(1);
    expect(proposeCC(c, 1, { type: 'addLearner', nodeId: 5 })).toBe('ok');
  });

  it('ordinary proposals are not held up by a pending change', () => {
    const c = Cluster.bootstrap([1, 2, 3]);
    c.elect(1);
    proposeCC(c, 1, { type: 'addLearner', nodeId: 4 });
    expect(() => c.raw(1).propose(bytes('a'))).not.toThrow();
  });

  it('a member does not campaign while a committed conf change is unapplied', () => {
    const c = Cluster.bootstrap([1, 2, 3]);
    c.elect(1);
    proposeCC(c, 1, { type: 'addLearner', nodeId: 4 });
    c.stabilize();
    proposeCC(c, 1, { type: 'removeNode', nodeId: 4 });
    c.drain(1);
    c.deliver(2);
    c.drain(2);
    c.deliver(1);
    c.drain(1); // commit goes out to 2 with the next append
    c.deliver(2);
    // 2 now knows the removal is committed, but has not handled the Ready that applies it.
    expect(c.raw(2).status().hardState.commit).toBe(4);
    expect(c.raw(2).status().applied).toBe(3);
    c.raw(2).campaign();
    expect(c.raw(2).status().softState.raftState).toBe('follower');
    c.drain(2);
    c.raw(2).campaign();
    expect(c.raw(2).status().softState.raftState).toBe('candidate');
  });

  it('configuration survives a restart: replayed from the log after the snapshot', () => {
    const c = Cluster.bootstrap([1, 2, 3]);
    c.elect(1);
    proposeCC(c, 1, { type: 'addLearner', nodeId: 4 });
    c.stabilize();
    c.get(2).restart();
    expect(c.raw(2).status().config).toEqual({ voters: [1, 2, 3], learners: [] });
    c.drain(2);
    expect(c.raw(2).status().config).toEqual({ voters: [1, 2, 3], learners: [4] });
    // After a compaction past the change, the snapshot carries it.
    c.compact(2, 3);
    c.get(2).restart();
    expect(c.raw(2).status().config).toEqual({ voters: [1, 2, 3], learners: [4] });
  });
});
