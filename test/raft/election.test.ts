// Leader election (Raft §5.2, §5.4.1; thesis §9.6 pre-vote, §6.2 check-quorum): randomized timeouts,
// one vote per term, the up-to-date rule, the leader's empty entry, and the two mechanisms that keep a
// partitioned member from disrupting a healthy cluster.
import { describe, expect, it } from 'vitest';
import type { Message, NodeId } from '../../src/raft/types.js';
import type { PlantedBugs } from '../../src/raft/raw-node.js';
import { RawNode } from '../../src/raft/raw-node.js';
import { SeededRng } from '../../src/raft/rng.js';
import { bootstrapStorage } from '../../src/raft/storage.js';
import { msg } from '../../src/raft/types.js';
import { Cluster } from './helpers/cluster.js';

const E = 10;

/** A lone member of a three-voter cluster, driven by hand. */
function lone(seed: number, opts: { preVote?: boolean; bugs?: PlantedBugs } = {}): RawNode {
  return new RawNode({ id: 1n, electionTick: E, heartbeatTick: 1, storage: bootstrapStorage([1n, 2n, 3n]), rng: new SeededRng(seed), ...opts });
}

/** Ticks until the member's election timer fires; returns how many ticks that took. */
function ticksToTimeout(n: RawNode): number {
  for (let i = 1; i <= 3 * E; i++) {
    n.tick();
    if (n.raft.electionElapsed === 0) return i;
  }
  throw new Error('election timer never fired');
}

function drainMessages(n: RawNode): Message[] {
  const out: Message[] = [];
  while (n.hasReady()) {
    const rd = n.ready();
    out.push(...rd.messages);
    n.advance();
  }
  return out;
}

describe('randomized election timeout', () => {
  it('fires within [E, 2E) ticks, for every seed, and takes many values', () => {
    const seen = new Set<number>();
    for (let seed = 1; seed <= 300; seed++) {
      const n = lone(seed);
      const t = ticksToTimeout(n);
      expect(t, `seed ${seed}`).toBeGreaterThanOrEqual(E);
      expect(t, `seed ${seed}`).toBeLessThan(2 * E);
      expect(n.status().softState.raftState, `seed ${seed}`).toBe('candidate');
      seen.add(t);
    }
    // Randomization is the point: nearly every value in the range appears across 300 seeds.
    expect(seen.size).toBeGreaterThanOrEqual(E - 1);
  });

  it('is drawn afresh on every timeout, so repeated elections stay desynchronized', () => {
    const n = lone(7);
    const timeouts = Array.from({ length: 50 }, () => ticksToTimeout(n));
    for (const t of timeouts) {
      expect(t).toBeGreaterThanOrEqual(E);
      expect(t).toBeLessThan(2 * E);
    }
    expect(new Set(timeouts).size).toBeGreaterThan(3);
    // Each timeout made it a candidate in a new term.
    expect(n.status().hardState.term).toBe(1 + timeouts.length);
  });

  it('a follower that hears from its leader never times out', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.elect(1n);
    for (let i = 0; i < 10 * E; i++) {
      c.tick(1n);
      c.tick(2n);
      c.tick(3n);
      c.stabilize();
    }
    expect(c.leaders()).toEqual([1n]);
    expect(c.raw(2n).status().hardState.term).toBe(2);
  });
});

describe('voting', () => {
  const vote = (from: NodeId, term: number, lastTerm: number, lastIndex: number): Message =>
    msg({ type: 'vote', from, to: 1n, term, logTerm: lastTerm, index: lastIndex });

  /** Two candidates ask one voter for its vote in the same term; returns which it granted. */
  function grants(bugs: PlantedBugs = {}): boolean[] {
    const n = lone(1, { bugs });
    n.step(vote(2n, 2, 1, 1));
    n.step(vote(3n, 2, 1, 1));
    return drainMessages(n)
      .filter((m) => m.type === 'voteResp')
      .map((m) => !m.reject);
  }

  it('grants at most one vote per term (§5.2)', () => {
    expect(grants()).toEqual([true, false]);
  });

  it('this check catches the planted voteTwice bug', () => {
    expect(grants({ voteTwice: true })).toEqual([true, true]);
  });

  it('repeats its vote to the same candidate (a retried request)', () => {
    const n = lone(1);
    n.step(vote(2n, 2, 1, 1));
    n.step(vote(2n, 2, 1, 1));
    expect(drainMessages(n).map((m) => m.reject)).toEqual([false, false]);
    expect(n.status().hardState.vote).toBe(2n);
  });

  it('persists the vote before the response leaves (it is in the same Ready, with mustSync)', () => {
    const n = lone(1);
    n.step(vote(2n, 2, 1, 1));
    const rd = n.ready();
    expect(rd.hardState).toEqual({ term: 2, vote: 2n, commit: 1 });
    expect(rd.mustSync).toBe(true);
    expect(rd.messages.map((m) => [m.type, m.to, m.reject])).toEqual([['voteResp', 2n, false]]);
    n.advance();
  });

  it('refuses a candidate whose log is less up to date (§5.4.1)', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.elect(1n);
    c.proposeAndStabilize(1n, 'x'); // everyone's log ends at 2/3
    const n = c.raw(3n);
    // Lower last term: refused even with a longer log.
    n.step(msg({ type: 'vote', from: 2n, to: 3n, term: 5, logTerm: 1, index: 10 }));
    // Same last term, shorter log: refused.
    n.step(msg({ type: 'vote', from: 2n, to: 3n, term: 6, logTerm: 2, index: 2 }));
    // Same last term, same length: granted.
    n.step(msg({ type: 'vote', from: 2n, to: 3n, term: 7, logTerm: 2, index: 3 }));
    const resps = drainMessages(n).filter((m) => m.type === 'voteResp');
    expect(resps.map((m) => [m.term, m.reject])).toEqual([
      [5, true],
      [6, true],
      [7, false],
    ]);
  });

  it('a candidate that collects a majority of rejections becomes a follower', () => {
    const n = lone(1);
    n.campaign();
    drainMessages(n);
    n.step(msg({ type: 'voteResp', from: 2n, to: 1n, term: 2, reject: true }));
    expect(n.status().softState.raftState).toBe('candidate');
    n.step(msg({ type: 'voteResp', from: 3n, to: 1n, term: 2, reject: true }));
    expect(n.status().softState.raftState).toBe('follower');
    expect(n.status().hardState.term).toBe(2);
  });

  it('a split vote elects nobody; the next timeout retries in a higher term', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n, 4n]);
    c.partition([1n, 3n], [2n, 4n]);
    c.raw(1n).campaign();
    c.raw(2n).campaign();
    c.stabilize();
    expect(c.leaders()).toEqual([]);
    expect(c.raw(1n).status().softState.raftState).toBe('candidate');
    expect(c.raw(2n).status().softState.raftState).toBe('candidate');
    c.heal();
    // The randomized timeouts differ, so ticking both eventually yields one leader.
    for (let i = 0; i < 4 * E && c.leaders().length === 0; i++) {
      for (const id of c.ids()) c.tick(id);
      c.stabilize();
    }
    expect(c.leaders()).toHaveLength(1);
    expect(c.raw(c.leaders()[0] as NodeId).status().hardState.term).toBeGreaterThanOrEqual(3);
  });
});

describe('becoming leader', () => {
  it('appends an empty entry of its own term right away, and commits it with a quorum', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.raw(1n).campaign();
    c.drain(1n);
    c.deliver(2n);
    c.deliver(3n);
    c.drain(2n);
    c.drain(3n);
    c.deliver(1n);
    expect(c.raw(1n).status().softState.raftState).toBe('leader');
    const ev = c.processReady(1n);
    expect(ev?.ready.entries).toEqual([{ term: 2, index: 2, type: 'normal', data: new Uint8Array() }]);
    expect(ev?.ready.messages.map((m) => [m.type, m.to, m.index, m.logTerm, m.entries.length])).toEqual([
      ['app', 2n, 1, 1, 1],
      ['app', 3n, 1, 1, 1],
    ]);
    c.stabilize();
    expect(c.raw(1n).status().hardState.commit).toBe(2);
  });

  it('a single voter elects itself at once', () => {
    const c = Cluster.bootstrap([1n]);
    c.raw(1n).campaign();
    expect(c.raw(1n).status().softState.raftState).toBe('leader');
    c.stabilize();
    expect(c.raw(1n).status().hardState.commit).toBe(2);
  });

  it('any message from a higher term turns a leader into a follower of that term (§5.1)', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.elect(1n);
    c.raw(1n).step(msg({ type: 'heartbeatResp', from: 2n, to: 1n, term: 9 }));
    const st = c.raw(1n).status();
    expect(st.softState).toEqual({ lead: 0n, raftState: 'follower' });
    expect(st.hardState.term).toBe(9);
    expect(st.hardState.vote).toBe(0n);
  });

  it('ignores messages from an older term', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.elect(1n);
    c.raw(2n).step(msg({ type: 'app', from: 3n, to: 2n, term: 1, index: 2, logTerm: 2, entries: [{ term: 1, index: 3, type: 'normal', data: new Uint8Array([1]) }] }));
    expect(c.raw(2n).status().lastIndex).toBe(2);
    expect(c.raw(2n).status().softState.lead).toBe(1n);
  });
});

describe('pre-vote', () => {
  it('a pre-candidate changes neither term nor vote, and nothing needs persisting', () => {
    const n = lone(1, { preVote: true });
    n.campaign();
    const st = n.status();
    expect(st.softState.raftState).toBe('preCandidate');
    expect(st.hardState).toEqual({ term: 1, vote: 0n, commit: 1 });
    const rd = n.ready();
    expect(rd.hardState).toBeUndefined();
    expect(rd.mustSync).toBe(false);
    // It asks about the term it would move to.
    expect(rd.messages.map((m) => [m.type, m.term])).toEqual([
      ['preVote', 2],
      ['preVote', 2],
    ]);
    n.advance();
  });

  it('after a quorum of pre-votes it becomes a candidate and raises its term', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n], { preVote: true });
    c.elect(1n);
    expect(c.leaders()).toEqual([1n]);
    expect(c.raw(1n).status().hardState.term).toBe(2);
  });

  it('an isolated member never inflates its term, and rejoins without deposing the leader', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n], { preVote: true });
    c.elect(1n);
    c.isolate(3n);
    c.proposeAndStabilize(1n, 'a');
    for (let i = 0; i < 10 * E; i++) {
      c.tick(3n);
      c.stabilize();
    }
    expect(c.raw(3n).status().hardState.term).toBe(2);
    c.heal();
    for (let i = 0; i < 3 * E; i++) {
      for (const id of c.ids()) c.tick(id);
      c.stabilize();
    }
    expect(c.leaders()).toEqual([1n]);
    expect(c.raw(1n).status().hardState.term).toBe(2);
    expect(c.get(3n).appliedData()).toEqual(['a']);
  });

  it('without pre-vote the same isolated member does depose the leader when it rejoins', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.elect(1n);
    c.isolate(3n);
    for (let i = 0; i < 5 * E; i++) {
      c.tick(3n);
      c.stabilize();
    }
    const inflated = c.raw(3n).status().hardState.term;
    expect(inflated).toBeGreaterThan(3);
    c.heal();
    // 3's next timeout sends vote requests at an even higher term; the leader must step down to it.
    ticksToTimeout(c.raw(3n));
    c.stabilize();
    expect(c.raw(1n).status().hardState.term).toBeGreaterThan(inflated);
    expect(c.raw(1n).status().softState.raftState).not.toBe('leader');
  });

  it('a voter answers a pre-vote without changing its own term or vote', () => {
    const n = lone(1, { preVote: true });
    n.step(msg({ type: 'preVote', from: 2n, to: 1n, term: 5, logTerm: 1, index: 1 }));
    const msgs = drainMessages(n);
    expect(msgs.map((m) => [m.type, m.term, m.reject])).toEqual([['preVoteResp', 5, false]]);
    expect(n.status().hardState).toEqual({ term: 1, vote: 0n, commit: 1 });
  });

  it('a lost pre-election returns the pre-candidate to follower in the same term', () => {
    const n = lone(1, { preVote: true });
    n.campaign();
    drainMessages(n);
    n.step(msg({ type: 'preVoteResp', from: 2n, to: 1n, term: 1, reject: true }));
    n.step(msg({ type: 'preVoteResp', from: 3n, to: 1n, term: 1, reject: true }));
    expect(n.status().softState.raftState).toBe('follower');
    expect(n.status().hardState.term).toBe(1);
  });
});

describe('check-quorum', () => {
  it('a leader that hears from no quorum for an election timeout steps down', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n], { checkQuorum: true });
    c.elect(1n);
    c.isolate(1n);
    // The first check still counts the responses of the previous window; the second finds nobody.
    c.tick(1n, E);
    expect(c.raw(1n).status().softState.raftState).toBe('leader');
    c.tick(1n, E);
    expect(c.raw(1n).status().softState).toEqual({ lead: 0n, raftState: 'follower' });
    expect(c.raw(1n).status().hardState.term).toBe(2);
  });

  it('a leader with a quorum (one follower of two) stays', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n], { checkQuorum: true });
    c.elect(1n);
    c.isolate(3n);
    for (let i = 0; i < 5 * E; i++) {
      c.tick(1n);
      c.stabilize();
    }
    expect(c.leaders()).toEqual([1n]);
  });

  it('without check-quorum a partitioned leader keeps believing it leads', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.elect(1n);
    c.isolate(1n);
    c.tick(1n, 5 * E);
    expect(c.raw(1n).status().softState.raftState).toBe('leader');
  });

  it('followers that heard from the leader within the timeout ignore a candidate (leader lease)', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n], { checkQuorum: true });
    c.elect(1n);
    c.raw(2n).campaign();
    c.stabilize();
    // 3 neither voted nor moved to 2's term; 1 ignored it too.
    expect(c.raw(3n).status().hardState).toMatchObject({ term: 2, vote: 1n });
    expect(c.raw(2n).status().softState.raftState).not.toBe('leader');
  });

  it('once the lease has expired, followers grant the vote', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n], { checkQuorum: true });
    c.elect(1n);
    c.isolate(1n);
    c.tick(3n, E); // 3 has not heard from 1 for a whole election timeout
    c.raw(2n).campaign();
    c.stabilize();
    expect(c.leaders()).toContain(2n);
    expect(c.raw(3n).status().hardState).toMatchObject({ term: 3, vote: 2n });
  });

  it('a stale leader learns the new term from the answer to its heartbeat, and steps down', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n], { checkQuorum: true });
    c.elect(1n);
    c.isolate(1n);
    c.tick(2n, E);
    c.tick(3n, E);
    c.raw(2n).campaign();
    c.stabilize();
    expect(c.leaders()).toEqual([1n, 2n]);
    c.heal();
    c.tick(1n, 5);
    c.stabilize();
    expect(c.leaders()).toEqual([2n]);
    expect(c.raw(1n).status().hardState.term).toBe(3);
  });
});

describe('a follower told its connection to the leader was lost', () => {
  const opts = { preVote: true, checkQuorum: true };

  it('when the leader is gone, the survivors elect a new one without waiting out an election timeout', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n], opts);
    c.elect(1n);
    c.isolate(1n);
    // Both survivors see the drop; one campaigns first and the other, its lease ended, grants the pre-vote.
    expect(c.raw(2n).leaderConnectionLost(1n)).toBe(true);
    expect(c.raw(3n).leaderConnectionLost(1n)).toBe(true);
    c.raw(2n).campaign();
    c.stabilize();
    expect(c.leaders().filter((id) => id !== 1n)).toEqual([2n]);
    expect(c.raw(3n).status().softState.lead).toBe(2n);
  });

  it('without the report, the other follower refuses the early campaign (leader lease)', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n], opts);
    c.elect(1n);
    c.isolate(1n);
    c.raw(2n).campaign();
    c.stabilize();
    expect(c.raw(2n).status().softState.raftState).not.toBe('leader');
    expect(c.raw(3n).status().hardState.term).toBe(2);
  });

  it('a drop under a live leader disturbs nothing: the pre-vote is refused and no term rises', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n], opts);
    c.elect(1n);
    expect(c.raw(2n).leaderConnectionLost(1n)).toBe(true);
    expect(c.raw(2n).raft.leaseEnded()).toBe(true);
    c.raw(2n).campaign();
    c.stabilize();
    expect(c.leaders()).toEqual([1n]);
    for (const id of c.ids()) expect(c.raw(id).status().hardState.term).toBe(2);
    // The next heartbeat from the leader makes it a follower again, with its lease.
    c.tick(1n, 5);
    c.stabilize();
    expect(c.raw(2n).raft.leaseEnded()).toBe(false);
    expect(c.raw(2n).status().softState.lead).toBe(1n);
  });

  it('two survivors that noticed at different times can both stall as pre-candidates; campaigning again ends it', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n], opts);
    c.elect(1n);
    // 2 has an entry that 3 lacks: 3's pre-vote will be refused by 2 (2's log is longer).
    c.cut(1n, 3n);
    c.raw(1n).propose(new TextEncoder().encode('only-2-has-it'));
    c.stabilize();
    c.isolate(1n);
    // 2 notices first and campaigns while 3 still holds its leader's lease: 3 ignores the pre-vote.
    expect(c.raw(2n).leaderConnectionLost(1n)).toBe(true);
    c.raw(2n).campaign();
    c.stabilize();
    // Then 3 notices and campaigns: 2, its log longer, refuses. Both are stuck until an election timeout.
    expect(c.raw(3n).leaderConnectionLost(1n)).toBe(true);
    c.raw(3n).campaign();
    c.stabilize();
    expect(c.raw(2n).raft.campaigning()).toBe(true);
    expect(c.raw(3n).raft.campaigning()).toBe(true);
    expect(c.leaders()).toEqual([1n]);
    // The member campaigns again a round later (Member.onConnectionLost): 3's lease is over, so 2 wins.
    c.raw(2n).campaign();
    c.stabilize();
    expect(c.leaders().filter((id) => id !== 1n)).toEqual([2n]);
    expect(c.raw(3n).status().softState.lead).toBe(2n);
  });

  it('is ignored unless the lost peer is our leader and we are a follower', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n], opts);
    c.elect(1n);
    expect(c.raw(2n).leaderConnectionLost(3n)).toBe(false);
    expect(c.raw(1n).leaderConnectionLost(2n)).toBe(false);
    expect(c.raw(2n).raft.leaseEnded()).toBe(false);
  });
});
