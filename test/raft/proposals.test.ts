// Where proposals go: the leader appends them; a follower forwards them to its leader, or, with forwarding
// disabled, refuses them with a hint naming the leader so the client can redirect. Nobody takes a proposal
// while no leader is known.
import { describe, expect, it } from 'vitest';
import type { Message, NodeId } from '../../src/raft/types.js';
import { RaftError } from '../../src/raft/errors.js';
import { Cluster, bytes } from './helpers/cluster.js';

function refusal(c: Cluster, id: NodeId, data = 'x'): { code: string; hint: number } | undefined {
  try {
    c.raw(id).propose(bytes(data));
    return undefined;
  } catch (e) {
    if (e instanceof RaftError) return { code: e.code, hint: e.leaderHint };
    throw e;
  }
}

/** 2 proposes and forwards to leader 1; the forwarded proposal is held back and returned for later delivery. */
function forwardedAndHeld(data: string): { c: Cluster; held: Message[] } {
  const c = Cluster.bootstrap([1, 2, 3]);
  c.elect(1);
  c.raw(2).propose(bytes(data));
  c.drain(2);
  const held = c.inflight;
  c.inflight = [];
  return { c, held };
}

describe('proposals', () => {
  it('a follower forwards to the leader, and the entry commits everywhere', () => {
    const c = Cluster.bootstrap([1, 2, 3]);
    c.elect(1);
    expect(refusal(c, 3, 'from-3')).toBeUndefined();
    c.drain(3);
    expect(c.inflight.map((m) => [m.type, m.from, m.to, m.term])).toEqual([['prop', 3, 1, 0]]);
    c.stabilize();
    for (const id of c.ids()) expect(c.get(id).appliedData()).toEqual(['from-3']);
  });

  it('a follower can take its forwards out of the pending messages, to send them without a Ready', () => {
    const c = Cluster.bootstrap([1, 2, 3]);
    c.elect(1);
    c.raw(3).propose(bytes('p'));
    c.raw(3).readIndex(bytes('r'));
    const fw = c.raw(3).takeForwards();
    expect(fw.map((m) => [m.type, m.from, m.to])).toEqual([
      ['prop', 3, 1],
      ['readIndex', 3, 1],
    ]);
    // Nothing else was pending: no Ready is left to carry them a second time.
    expect(c.raw(3).hasReady()).toBe(false);
    expect(c.raw(3).takeForwards()).toEqual([]);
    c.inflight.push(...fw);
    c.stabilize();
    for (const id of c.ids()) expect(c.get(id).appliedData()).toEqual(['p']);
    // The leader forwards nothing: its own proposals and reads stay in its Ready.
    c.raw(1).propose(bytes('q'));
    expect(c.raw(1).takeForwards()).toEqual([]);
    expect(c.raw(1).hasReady()).toBe(true);
  });

  it('conf changes are forwarded too', () => {
    const c = Cluster.bootstrap([1, 2, 3]);
    c.elect(1);
    c.raw(2).proposeConfChange({ type: 'addLearner', nodeId: 4 });
    c.stabilize();
    expect(c.raw(1).status().config.learners).toEqual([4]);
  });

  it('with forwarding disabled a follower refuses, naming the leader', () => {
    const c = Cluster.bootstrap([1, 2, 3], { disableProposalForwarding: true });
    c.elect(1);
    expect(refusal(c, 2)).toEqual({ code: 'RAFT_PROPOSAL_DROPPED', hint: 1 });
    expect(c.raw(2).hasReady()).toBe(false);
    // The leader itself still takes proposals.
    expect(refusal(c, 1)).toBeUndefined();
  });

  it('without a known leader every member refuses, with hint 0', () => {
    const c = Cluster.bootstrap([1, 2, 3]);
    for (const id of c.ids()) expect(refusal(c, id)).toEqual({ code: 'RAFT_PROPOSAL_DROPPED', hint: 0 });
    c.raw(1).campaign();
    expect(c.raw(1).status().softState.raftState).toBe('candidate');
    expect(refusal(c, 1)).toEqual({ code: 'RAFT_PROPOSAL_DROPPED', hint: 0 });
  });

  it('a forwarded proposal that reaches a deposed leader is passed on to the new one', () => {
    const { c, held } = forwardedAndHeld('late');
    c.raw(3).campaign();
    c.stabilize();
    expect(c.leaders()).toEqual([3]);
    c.inflight.push(...held);
    c.stabilize();
    expect(c.get(3).appliedData()).toEqual(['late']);
  });

  it('a forwarded proposal that reaches a member without a leader is dropped silently', () => {
    const { c, held } = forwardedAndHeld('lost');
    c.raw(3).campaign(); // 1 learns of term 3 but nobody has won yet
    c.drain(3);
    c.deliver(1);
    expect(c.raw(1).status().softState).toEqual({ lead: 0, raftState: 'follower' });
    c.inflight.push(...held);
    expect(c.deliver(1).map((d) => [d.message.type, d.error])).toEqual([['prop', undefined]]);
    expect(c.raw(1).status().lastIndex).toBe(2);
  });

  it('proposeBatch appends many entries with one append per follower', () => {
    const c = Cluster.bootstrap([1, 2, 3]);
    c.elect(1);
    c.raw(1).proposeBatch(['a', 'b', 'c'].map(bytes));
    c.drain(1);
    const apps = c.inflight.filter((m) => m.type === 'app');
    expect(apps.map((m) => [m.to, m.entries.map((e) => e.index)])).toEqual([
      [2, [3, 4, 5]],
      [3, [3, 4, 5]],
    ]);
    c.stabilize();
    expect(c.get(3).appliedData()).toEqual(['a', 'b', 'c']);
  });
});
