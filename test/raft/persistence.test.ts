// The Ready/advance contract and recovery from storage alone: what must be persisted (term, vote, log)
// reaches the application before any message that depends on it, and a member rebuilt from its storage
// resumes with the same term, vote, commit index, log and configuration; in particular it never votes twice.
import { describe, expect, it } from 'vitest';
import type { NodeId } from '../../src/raft/types.js';
import { RawNode } from '../../src/raft/raw-node.js';
import { RaftError } from '../../src/raft/errors.js';
import { SeededRng } from '../../src/raft/rng.js';
import { msg } from '../../src/raft/types.js';
import { Cluster, bytes } from './helpers/cluster.js';

function codeOf(fn: () => unknown): string {
  try {
    fn();
    return 'ok';
  } catch (e) {
    if (e instanceof RaftError) return e.code;
    throw e;
  }
}

/** A cluster where 1 leads term 2 and 'a', 'b' are committed (commit index 4). */
function settled(): Cluster {
  const c = Cluster.bootstrap([1n, 2n, 3n]);
  c.elect(1n);
  c.proposeAndStabilize(1n, 'a');
  c.proposeAndStabilize(1n, 'b');
  return c;
}

describe('the Ready contract', () => {
  it('reports hard state changes, and asks for a sync only when term, vote or entries change', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.raw(1n).campaign();
    const campaign = c.processReady(1n)?.ready;
    expect(campaign?.hardState).toEqual({ term: 2, vote: 1n, commit: 1 });
    expect(campaign?.mustSync).toBe(true);
    c.stabilize();
    c.raw(1n).propose(bytes('a'));
    const append = c.processReady(1n)?.ready;
    expect(append?.hardState).toBeUndefined();
    expect(append?.entries).toHaveLength(1);
    expect(append?.mustSync).toBe(true);
    c.stabilize([2n, 3n]);
    c.deliver(1n);
    const commit = c.processReady(1n)?.ready;
    expect(commit?.hardState).toEqual({ term: 2, vote: 1n, commit: 3 });
    expect(commit?.mustSync).toBe(false);
  });

  it('asks for a sync when the Ready carries a snapshot: the follower acknowledges it in the same Ready', () => {
    // Were an acknowledged snapshot lost in a crash, the leader's match for this follower would exceed
    // its log, and the leader ignores rejections at or below match: replication to it would never resume.
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    const snapshot = { metadata: { index: 10, term: 1, confState: { voters: [1n, 2n, 3n], learners: [] } }, data: new Uint8Array() };
    c.raw(2n).step(msg({ type: 'snap', from: 1n, to: 2n, term: 1, snapshot }));
    const rd = c.raw(2n).ready();
    expect(rd.snapshot?.metadata.index).toBe(10);
    expect(rd.messages).toMatchObject([{ type: 'appResp', index: 10 }]);
    expect(rd.mustSync).toBe(true);
    c.raw(2n).advance();
  });

  it('a follower’s acknowledgement travels in the same Ready as the entries it acknowledges', () => {
    const c = settled();
    c.raw(1n).propose(bytes('c'));
    c.drain(1n);
    c.deliver(2n);
    const rd = c.raw(2n).ready();
    expect(rd.entries.map((e) => e.index)).toEqual([5]);
    expect(rd.messages).toMatchObject([{ type: 'appResp', index: 5 }]);
    c.raw(2n).advance();
  });

  it('hands out one Ready at a time: nothing more until advance, and a second ready() is an error', () => {
    const c = settled();
    c.raw(1n).propose(bytes('c'));
    c.raw(1n).ready();
    expect(c.raw(1n).hasReady()).toBe(false);
    expect(codeOf(() => c.raw(1n).ready())).toBe('RAFT_INVARIANT');
    c.raw(1n).advance();
    expect(codeOf(() => c.raw(1n).advance())).toBe('RAFT_INVARIANT');
  });

  it('refuses local message types from the network, and responses from unknown members on a leader', () => {
    const c = settled();
    for (const type of ['hup', 'beat', 'checkQuorum', 'unreachable', 'snapStatus'] as const) {
      expect(codeOf(() => c.raw(2n).step(msg({ type, from: 1n, to: 2n, term: 2 }))), type).toBe('RAFT_STEP_LOCAL_MSG');
    }
    expect(codeOf(() => c.raw(1n).step(msg({ type: 'appResp', from: 9n, to: 1n, term: 2, index: 4 })))).toBe('RAFT_STEP_PEER_NOT_FOUND');
    // A follower has no progress to update, so it does not care who answered.
    expect(codeOf(() => c.raw(2n).step(msg({ type: 'heartbeatResp', from: 9n, to: 2n, term: 2 })))).toBe('ok');
  });
});

describe('recovery from storage', () => {
  it('a restarted member resumes with its term, vote, commit index, log and configuration', () => {
    const c = settled();
    for (const id of [1n, 2n, 3n] as NodeId[]) {
      const before = c.raw(id).status();
      c.get(id).restart();
      const after = c.raw(id).status();
      expect(after.hardState, `node ${id}`).toEqual(before.hardState);
      expect(after.lastIndex, `node ${id}`).toBe(before.lastIndex);
      expect(after.config, `node ${id}`).toEqual(before.config);
      // Roles are not persisted: everyone restarts as a follower without a leader.
      expect(after.softState, `node ${id}`).toEqual({ lead: 0n, raftState: 'follower' });
    }
  });

  it('re-applies committed entries after the applied index it restarts with, and only those', () => {
    const c = settled();
    const s = c.get(2n).storage;
    const fresh = (applied: number) =>
      new RawNode({ id: 2n, electionTick: 10, heartbeatTick: 1, storage: s, rng: new SeededRng(2), applied });
    const replay = (n: RawNode) => n.ready().committedEntries.map((e) => e.index);
    expect(replay(fresh(1))).toEqual([2, 3, 4]);
    expect(replay(fresh(3))).toEqual([4]);
    expect(fresh(4).hasReady()).toBe(false);
  });

  it('never votes twice in a term across a restart', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.raw(3n).step(msg({ type: 'vote', from: 1n, to: 3n, term: 2, index: 1, logTerm: 1 }));
    c.drain(3n); // the vote is persisted with the response
    c.inflight = [];
    c.get(3n).restart();
    c.raw(3n).step(msg({ type: 'vote', from: 2n, to: 3n, term: 2, index: 1, logTerm: 1 }));
    c.drain(3n);
    expect(c.inflight.map((m) => [m.type, m.to, m.reject])).toEqual([['voteResp', 2n, true]]);
  });

  it('whatever was not persisted is gone: an unhandled campaign leaves no trace', () => {
    const c = settled();
    c.raw(2n).campaign();
    expect(c.raw(2n).status().hardState.term).toBe(3);
    c.get(2n).restart();
    expect(c.raw(2n).status().hardState).toEqual({ term: 2, vote: 1n, commit: 4 });
  });

  it('a restarted cluster elects a leader and keeps every committed entry', () => {
    const c = settled();
    for (const id of c.ids()) c.get(id).restart();
    c.inflight = [];
    for (let i = 0; i < 40 && c.leaders().length === 0; i++) {
      for (const id of c.ids()) c.tick(id);
      c.stabilize();
    }
    expect(c.leaders()).toHaveLength(1);
    const lead = c.leaders()[0] as NodeId;
    c.proposeAndStabilize(lead, 'c');
    for (const id of c.ids()) expect(c.get(id).appliedData()).toEqual(['a', 'b', 'c']);
  });
});
