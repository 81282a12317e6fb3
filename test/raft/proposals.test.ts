// Where proposals go: the leader appends them; a follower forwards them to its leader, or, with forwarding
// disabled, refuses them with a hint naming the leader so the client can redirect. Nobody takes a proposal
// while no leader is known.
import { describe, expect, it } from 'vitest';
import type { Message, NodeId } from '../../src/raft/types.js';
import { RaftError } from '../../src/raft/errors.js';
import { Cluster, bytes } from './helpers/cluster.js';

function refusal(c: Cluster, id: NodeId, data = 'x'): { code: string; hint: NodeId } | undefined {
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
  const c = Cluster.bootstrap([1n, 2n, 3n]);
  c.elect(1n);
  c.raw(2n).propose(bytes(data));
  c.drain(2n);
  const held = c.inflight;
  c.inflight = [];
  return { c, held };
}

describe('proposals', () => {
  it('a follower forwards to the leader, and the entry commits everywhere', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.elect(1n);
    expect(refusal(c, 3n, 'from-3')).toBeUndefined();
    c.drain(3n);
    expect(c.inflight.map((m) => [m.type, m.from, m.to, m.term])).toEqual([['prop', 3n, 1n, 0]]);
    c.stabilize();
    for (const id of c.ids()) expect(c.get(id).appliedData()).toEqual(['from-3']);
  });

  it('a follower can take its forwards out of the pending messages, to send them without a Ready', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.elect(1n);
    c.raw(3n).propose(bytes('p'));
    c.raw(3n).readIndex(bytes('r'));
    const fw = c.raw(3n).takeForwards();
    expect(fw.map((m) => [m.type, m.from, m.to])).toEqual([
      ['prop', 3n, 1n],
      ['readIndex', 3n, 1n],
    ]);
    // Nothing else was pending: no Ready is left to carry them a second time.
    expect(c.raw(3n).hasReady()).toBe(false);
    expect(c.raw(3n).takeForwards()).toEqual([]);
    c.inflight.push(...fw);
    c.stabilize();
    for (const id of c.ids()) expect(c.get(id).appliedData()).toEqual(['p']);
    // The leader forwards nothing: its own proposals and reads stay in its Ready.
    c.raw(1n).propose(bytes('q'));
    expect(c.raw(1n).takeForwards()).toEqual([]);
    expect(c.raw(1n).hasReady()).toBe(true);
  });

  it('conf changes are forwarded too', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.elect(1n);
    c.raw(2n).proposeConfChange({ type: 'addLearner', nodeId: 4n });
    c.stabilize();
    expect(c.raw(1n).status().config.learners).toEqual([4n]);
  });

  it('with forwarding disabled a follower refuses, naming the leader', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n], { disableProposalForwarding: true });
    c.elect(1n);
    expect(refusal(c, 2n)).toEqual({ code: 'RAFT_PROPOSAL_DROPPED', hint: 1n });
    expect(c.raw(2n).hasReady()).toBe(false);
    // The leader itself still takes proposals.
    expect(refusal(c, 1n)).toBeUndefined();
  });

  it('without a known leader every member refuses, with hint 0', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    for (const id of c.ids()) expect(refusal(c, id)).toEqual({ code: 'RAFT_PROPOSAL_DROPPED', hint: 0n });
    c.raw(1n).campaign();
    expect(c.raw(1n).status().softState.raftState).toBe('candidate');
    expect(refusal(c, 1n)).toEqual({ code: 'RAFT_PROPOSAL_DROPPED', hint: 0n });
  });

  it('a forwarded proposal that reaches a deposed leader is passed on to the new one', () => {
    const { c, held } = forwardedAndHeld('late');
    c.raw(3n).campaign();
    c.stabilize();
    expect(c.leaders()).toEqual([3n]);
    c.inflight.push(...held);
    c.stabilize();
    expect(c.get(3n).appliedData()).toEqual(['late']);
  });

  it('a forwarded proposal that reaches a member without a leader is dropped silently', () => {
    const { c, held } = forwardedAndHeld('lost');
    c.raw(3n).campaign(); // 1 learns of term 3 but nobody has won yet
    c.drain(3n);
    c.deliver(1n);
    expect(c.raw(1n).status().softState).toEqual({ lead: 0n, raftState: 'follower' });
    c.inflight.push(...held);
    expect(c.deliver(1n).map((d) => [d.message.type, d.error])).toEqual([['prop', undefined]]);
    expect(c.raw(1n).status().lastIndex).toBe(2);
  });

  it('proposeBatch appends many entries with one append per follower', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.elect(1n);
    c.raw(1n).proposeBatch(['a', 'b', 'c'].map(bytes));
    c.drain(1n);
    const apps = c.inflight.filter((m) => m.type === 'app');
    expect(apps.map((m) => [m.to, m.entries.map((e) => e.index)])).toEqual([
      [2n, [3, 4, 5]],
      [3n, [3, 4, 5]],
    ]);
    c.stabilize();
    expect(c.get(3n).appliedData()).toEqual(['a', 'b', 'c']);
  });
});
