// Log replication (Raft §5.3, §5.4.2): the consistency check and its rejection hints, the commit rule that
// counts only current-term entries, and the leader's flow control per follower (probe, replicate with an
// inflight window and message size limit, batching and pipelining).
import { describe, expect, it } from 'vitest';
import type { Message, NodeId } from '../../src/raft/types.js';
import type { PlantedBugs } from '../../src/raft/raw-node.js';
import { RawNode } from '../../src/raft/raw-node.js';
import { SeededRng } from '../../src/raft/rng.js';
import { RaftError } from '../../src/raft/errors.js';
import { entrySize, msg } from '../../src/raft/types.js';
import type { MemoryStorage } from '../../src/raft/storage.js';
import { Cluster, bytes, storageWithLog } from './helpers/cluster.js';

const ent = (term: number, index: number, data = '') => ({ term, index, type: 'normal' as const, data: bytes(data) });

/** A RawNode over its own storage, outside any cluster: the test plays every peer by hand. */
function loneNode(id: NodeId, storage: MemoryStorage, bugs: PlantedBugs = {}): { n: RawNode; drain: () => Message[] } {
  const n = new RawNode({ id, electionTick: 10, heartbeatTick: 1, storage, rng: new SeededRng(Number(id)), bugs });
  // Handles every Ready as the application must (persist, then advance) and returns the messages.
  const drain = (): Message[] => {
    const out: Message[] = [];
    while (n.hasReady()) {
      const rd = n.ready();
      storage.append(rd.entries);
      if (rd.hardState) storage.setHardState(rd.hardState);
      out.push(...rd.messages);
      n.advance();
    }
    return out;
  };
  return { n, drain };
}

const apps = (ms: readonly Message[], to?: NodeId): Message[] => ms.filter((m) => m.type === 'app' && (to === undefined || m.to === to));

describe('commit rule (§5.4.2, Figure 8)', () => {
  /**
   * Leader 1 wins term 3 holding 2/2, an entry of term 2 that never committed, and appends its empty entry
   * 3/3. Then 2 acknowledges only index 2: a quorum (1, 2) holds 2/2. Returns the commit index after that
   * acknowledgement and after 2 also acknowledges 3/3.
   */
  function commitAfterAcks(bugs: PlantedBugs = {}): [number, number] {
    const { n, drain } = loneNode(1n, storageWithLog([1n, 2n, 3n], [2], { term: 2 }), bugs);
    n.campaign();
    n.step(msg({ type: 'voteResp', from: 2n, to: 1n, term: 3 }));
    expect(n.status().softState.raftState).toBe('leader');
    drain(); // the leader's own entry 3/3 is now persisted and counts for its own match
    n.step(msg({ type: 'appResp', from: 2n, to: 1n, term: 3, index: 2 }));
    drain();
    const afterOld = n.status().hardState.commit;
    n.step(msg({ type: 'appResp', from: 2n, to: 1n, term: 3, index: 3 }));
    drain();
    return [afterOld, n.status().hardState.commit];
  }

  it('an earlier-term entry on a quorum is not committed until an entry of the current term is', () => {
    expect(commitAfterAcks()).toEqual([1, 3]);
  });

  it('this check catches the planted commitPreviousTermByCounting bug', () => {
    expect(commitAfterAcks({ commitPreviousTermByCounting: true })).toEqual([2, 3]);
  });

  it('the leader counts its own entries only once they are persisted', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.elect(1n);
    c.raw(1n).propose(bytes('x'));
    // 2 acknowledges before the leader has handled its own Ready: 2 alone is not a quorum.
    const rd = c.raw(1n).ready();
    for (const m of rd.messages) c.inflight.push(m);
    c.deliver(2n);
    c.drain(2n);
    c.deliver(1n);
    expect(c.raw(1n).status().hardState.commit).toBe(2);
    c.get(1n).storage.append(rd.entries);
    c.raw(1n).advance();
    expect(c.raw(1n).status().hardState.commit).toBe(3);
  });
});

describe('consistency check and rejection hints (§5.3)', () => {
  // The follower's log: 1/1 (snapshot), 2/2, 2/3, 3/4, 3/5; it follows 1 in term 5.
  const follower = () => loneNode(2n, storageWithLog([1n, 2n, 3n], [2, 2, 3, 3], { term: 5 }));
  const probe = (index: number, logTerm: number, commit = 0, entries = [] as ReturnType<typeof ent>[]) =>
    msg({ type: 'app', from: 1n, to: 2n, term: 5, index, logTerm, commit, entries });

  const cases: Array<{ name: string; index: number; logTerm: number; hint: [number, number] }> = [
    { name: 'a different term at the probed index', index: 5, logTerm: 4, hint: [5, 3] },
    { name: 'an index beyond the log: hint from the last entry', index: 9, logTerm: 4, hint: [5, 3] },
    { name: 'a whole term to skip: hint the last entry of a term <= the probe term', index: 5, logTerm: 2, hint: [3, 2] },
    { name: 'back to the snapshot', index: 4, logTerm: 1, hint: [1, 1] },
  ];
  for (const c of cases) {
    it(`rejects ${c.name}`, () => {
      const { n, drain } = follower();
      n.step(probe(c.index, c.logTerm));
      const [resp] = drain();
      expect(resp).toMatchObject({ type: 'appResp', to: 1n, reject: true, index: c.index, rejectHint: c.hint[0], logTerm: c.hint[1] });
      expect(n.status().lastIndex).toBe(5);
    });
  }

  it('on a match, truncates a conflicting suffix, appends, and commits no further than the new entries', () => {
    const { n } = follower();
    n.step(probe(3, 2, 9, [ent(5, 4, 'new')]));
    expect(n.status().lastIndex).toBe(4);
    const rd = n.ready();
    expect(rd.entries).toEqual([ent(5, 4, 'new')]);
    expect(rd.hardState?.commit).toBe(4);
    expect(rd.messages).toMatchObject([{ type: 'appResp', reject: false, index: 4 }]);
  });

  it('keeps matching entries and does not truncate for a stale, shorter append', () => {
    const { n, drain } = follower();
    n.step(probe(2, 2, 0, [ent(2, 3)]));
    expect(drain()).toMatchObject([{ type: 'appResp', reject: false, index: 3 }]);
    expect(n.status().lastIndex).toBe(5);
  });

  it('answers an append below its commit index with that commit index', () => {
    const { n, drain } = follower();
    n.step(probe(5, 3, 5));
    drain();
    n.step(probe(2, 2, 5, [ent(2, 3)]));
    expect(drain()).toMatchObject([{ type: 'appResp', reject: false, index: 5 }]);
  });

  it('the leader uses the hint to skip the whole conflicting term in one round trip', () => {
    // Leader 1 and 3: 2/2 2/3 4/4 4/5 4/6. Follower 2: a long uncommitted term-3 tail 2/2 2/3 3/4 .. 3/9.
    const c = new Cluster(1);
    c.add(1n, storageWithLog([1n, 2n, 3n], [2, 2, 4, 4, 4], { term: 4 }));
    c.add(2n, storageWithLog([1n, 2n, 3n], [2, 2, 3, 3, 3, 3, 3, 3], { term: 4 }));
    c.add(3n, storageWithLog([1n, 2n, 3n], [2, 2, 4, 4, 4], { term: 4 }));
    const rejections: Message[] = [];
    c.raw(1n).campaign();
    c.stabilize(c.ids(), (s) => {
      if (s.kind === 'deliver' && s.id === 1n) rejections.push(...s.deliveries.map((d) => d.message).filter((m) => m.type === 'appResp' && m.reject));
    });
    // Probe at 4/6 rejected with hint 6/3; the leader jumps to its last entry of term <= 3 (index 3).
    expect(rejections.map((m) => [m.from, m.index, m.rejectHint, m.logTerm])).toEqual([[2n, 6, 6, 3]]);
    const log2 = c.get(2n).storage;
    expect(log2.entries(2, log2.lastIndex() + 1, Infinity).map((e) => e.term)).toEqual([2, 2, 4, 4, 4, 5]);
    expect(c.raw(1n).status().progress.get(2n)).toMatchObject({ state: 'replicate', match: 7 });
  });
});

describe('progress and flow control', () => {
  /** A leader (1) of three whose followers have acknowledged everything; messages stay queued for the test. */
  function leader(opts: { maxInflightMsgs?: number; maxSizePerMsg?: number; maxUncommittedEntriesSize?: number } = {}): Cluster {
    const c = Cluster.bootstrap([1n, 2n, 3n], opts);
    c.elect(1n);
    return c;
  }

  it('a probing follower gets one append at a time until it answers', () => {
    const c = leader();
    c.raw(1n).reportUnreachable(2n); // replicate -> probe
    expect(c.raw(1n).status().progress.get(2n)?.state).toBe('probe');
    for (const d of ['a', 'b', 'c']) c.raw(1n).propose(bytes(d));
    c.drain(1n);
    expect(apps(c.inflight, 2n)).toHaveLength(1);
    expect(apps(c.inflight, 3n)).toHaveLength(3);
    // The answer moves it to replicate, and everything else goes out in one batch.
    c.deliver(2n);
    c.drain(2n);
    c.deliver(1n, (m) => m.from === 2n);
    c.drain(1n);
    expect(c.raw(1n).status().progress.get(2n)?.state).toBe('replicate');
    const next = apps(c.inflight, 2n);
    expect(next).toHaveLength(1);
    expect(next[0]?.entries.map((e) => e.index)).toEqual([4, 5]);
  });

  it('a replicating follower gets pipelined appends without waiting, up to the inflight limit', () => {
    const c = leader({ maxInflightMsgs: 3 });
    for (const d of ['a', 'b', 'c', 'd', 'e']) {
      c.raw(1n).propose(bytes(d));
      c.drain(1n);
    }
    // Three appends in flight to each follower; the last two entries wait for the window to open.
    expect(apps(c.inflight, 2n).map((m) => m.entries.map((e) => e.index))).toEqual([[3], [4], [5]]);
    // One acknowledgement frees the window, and the waiting entries go out together in one message.
    c.deliver(2n, (m) => m.index === 2);
    c.drain(2n);
    c.deliver(1n, (m) => m.from === 2n);
    c.drain(1n);
    expect(apps(c.inflight, 2n).map((m) => m.entries.map((e) => e.index))).toEqual([[4], [5], [6, 7]]);
  });

  it('never puts more than maxSizePerMsg bytes of entries in one append (but at least one entry)', () => {
    const big = 'x'.repeat(100);
    const size = entrySize(ent(2, 3, big));
    const c = leader({ maxSizePerMsg: 2 * size, maxInflightMsgs: 1 });
    for (let i = 0; i < 5; i++) c.raw(1n).propose(bytes(big));
    c.raw(1n).propose(bytes('y'.repeat(5 * size))); // alone over the limit
    const batches: number[] = [];
    c.stabilize(c.ids(), (s) => {
      if (s.kind === 'deliver' && s.id === 2n) for (const d of s.deliveries) if (d.message.entries.length > 0) batches.push(d.message.entries.length);
    });
    // The first goes out alone (the window of one is then full); the rest in batches of two, and the
    // oversized entry by itself.
    expect(batches).toEqual([1, 2, 2, 1]);
    expect(c.get(2n).appliedData()).toHaveLength(6);
  });

  it('falls back to probing when the follower is reported unreachable, and to replicate on its next answer', () => {
    const c = leader();
    c.raw(1n).reportUnreachable(3n);
    expect(c.raw(1n).status().progress.get(3n)?.state).toBe('probe');
    c.proposeAndStabilize(1n, 'a');
    expect(c.raw(1n).status().progress.get(3n)).toMatchObject({ state: 'replicate', match: 3, next: 4 });
  });

  it('an idle follower knocked back to probing returns to replicate on the next heartbeat round', () => {
    const c = leader();
    c.raw(1n).reportUnreachable(2n);
    c.tick(1n, 5);
    c.stabilize();
    expect(c.raw(1n).status().progress.get(2n)).toMatchObject({ state: 'replicate', match: 2, next: 3 });
    // And it stays quiet: the next heartbeat round sends no append at all.
    c.tick(1n, 5);
    c.drain(1n);
    expect(c.inflight.map((m) => m.type)).toEqual(['heartbeat', 'heartbeat']);
  });

  it('rejects proposals past maxUncommittedEntriesSize, and takes them again once entries commit', () => {
    const c = leader({ maxUncommittedEntriesSize: 10 });
    c.isolate(1n);
    c.raw(1n).propose(bytes('12345'));
    c.raw(1n).propose(bytes('12345'));
    let err: unknown;
    try {
      c.raw(1n).propose(bytes('1'));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RaftError);
    expect((err as RaftError).code).toBe('RAFT_PROPOSAL_DROPPED');
    expect((err as RaftError).leaderHint).toBe(1n);
    c.heal();
    c.stabilize();
    c.tick(1n, 5);
    c.stabilize();
    expect(c.raw(1n).status().hardState.commit).toBe(4);
    c.proposeAndStabilize(1n, '1');
    expect(c.get(2n).appliedData()).toEqual(['12345', '12345', '1']);
  });

  it('tells a follower to commit no further than it is known to hold (heartbeat commit = min(match, commit))', () => {
    const c = leader();
    c.isolate(3n);
    c.proposeAndStabilize(1n, 'a');
    c.tick(1n, 5);
    c.drain(1n);
    const hb = c.inflight.filter((m) => m.type === 'heartbeat');
    expect(hb.map((m) => [m.to, m.commit])).toEqual([
      [2n, 3],
      [3n, 2],
    ]);
  });

  it('hands out committed entries in order, never an uncommitted one, at most maxCommittedSizePerReady at a time', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n], { maxCommittedSizePerReady: 1 });
    c.elect(1n);
    for (const d of ['a', 'b', 'c']) c.raw(1n).propose(bytes(d));
    const seen: number[][] = [];
    c.stabilize(c.ids(), (s) => {
      if (s.kind === 'ready' && s.id === 2n && s.event.ready.committedEntries.length > 0) {
        const committed = s.event.ready.committedEntries;
        expect(committed.every((e) => e.index <= (s.event.ready.hardState?.commit ?? c.get(2n).storage.getHardState().commit))).toBe(true);
        seen.push(committed.map((e) => e.index));
      }
    });
    expect(seen.flat()).toEqual([3, 4, 5]);
    // With a 1-byte budget each Ready carries one entry.
    expect(seen.every((b) => b.length === 1)).toBe(true);
    expect(c.get(2n).appliedData()).toEqual(['a', 'b', 'c']);
  });
});
