// ReadIndex (Raft thesis §6.4): a read is answered with the leader's commit index only after a quorum has
// acknowledged a heartbeat round sent after the read arrived, and only once the leader has committed an
// entry of its own term. Reads that queue behind a round in flight share the next round.
import { describe, expect, it } from 'vitest';
import type { Message, NodeId } from '../../src/raft/types.js';
import type { PlantedBugs } from '../../src/raft/raw-node.js';
import { RaftError } from '../../src/raft/errors.js';
import { Cluster, bytes, text } from './helpers/cluster.js';

const reads = (c: Cluster, id: NodeId): string[] => c.get(id).readStates.map((r) => `${text(r.requestCtx)}@${r.index}`);

/** A three-member cluster with 1 as leader and one committed entry 'a' (commit index 3). */
function cluster(bugs: PlantedBugs = {}): Cluster {
  const c = Cluster.bootstrap([1n, 2n, 3n], { bugs });
  c.elect(1n);
  c.proposeAndStabilize(1n, 'a');
  return c;
}

describe('ReadIndex', () => {
  it('answers on the leader only after a quorum acknowledges a heartbeat round', () => {
    const c = cluster();
    c.raw(1n).readIndex(bytes('r1'));
    c.drain(1n);
    const hb = c.inflight.filter((m) => m.type === 'heartbeat');
    expect(hb.map((m) => [m.to, text(m.context)])).toEqual([
      [2n, 'r1'],
      [3n, 'r1'],
    ]);
    expect(reads(c, 1n)).toEqual([]);
    c.deliver(2n);
    c.drain(2n);
    c.deliver(1n);
    c.drain(1n);
    expect(reads(c, 1n)).toEqual(['r1@3']);
  });

  it('records the commit index as of the read’s arrival', () => {
    const c = cluster();
    c.raw(1n).readIndex(bytes('r1'));
    c.raw(1n).propose(bytes('b'));
    c.stabilize();
    expect(c.raw(1n).status().hardState.commit).toBe(4);
    expect(reads(c, 1n)).toEqual(['r1@3']);
  });

  it('batches: reads arriving while a round is in flight share one more round', () => {
    const c = cluster();
    const rounds: Message[] = [];
    c.raw(1n).readIndex(bytes('r0'));
    c.drain(1n);
    for (let i = 1; i <= 20; i++) c.raw(1n).readIndex(bytes(`r${i}`));
    c.stabilize(c.ids(), (s) => {
      if (s.kind === 'ready' && s.id === 1n) rounds.push(...s.event.ready.messages.filter((m) => m.type === 'heartbeat'));
    });
    // The first round was sent before stabilize; stabilize saw exactly one more, for all twenty.
    expect(rounds.map((m) => [m.to, text(m.context)])).toEqual([
      [2n, 'r20'],
      [3n, 'r20'],
    ]);
    expect(reads(c, 1n)).toEqual(Array.from({ length: 21 }, (_, i) => `r${i}@3`));
  });

  it('a leader cut off from the quorum never answers', () => {
    const c = cluster();
    c.isolate(1n);
    c.raw(1n).readIndex(bytes('r1'));
    for (let i = 0; i < 30; i++) {
      c.tick(1n);
      c.stabilize();
    }
    expect(reads(c, 1n)).toEqual([]);
  });

  it('this check catches the planted readWithoutQuorum bug (a deposed leader serving a stale read)', () => {
    const c = cluster({ readWithoutQuorum: true });
    c.isolate(1n);
    c.raw(2n).campaign();
    c.stabilize();
    c.proposeAndStabilize(2n, 'b'); // committed at 5 by the new leader
    c.raw(1n).readIndex(bytes('stale'));
    c.stabilize();
    // The old leader answered at 3 without asking anyone: a read that misses 'b'.
    expect(reads(c, 1n)).toEqual(['stale@3']);
  });

  it('holds reads on a new leader until it commits an entry of its own term', () => {
    const c = cluster();
    c.raw(2n).campaign();
    c.drain(2n);
    c.deliver(1n);
    c.deliver(3n);
    c.drain(1n);
    c.drain(3n);
    c.deliver(2n);
    expect(c.raw(2n).status().softState.raftState).toBe('leader');
    c.raw(2n).readIndex(bytes('n1'));
    const first = c.processReady(2n);
    // The empty entry goes out, but no heartbeat round for the read yet.
    expect(first?.ready.messages.filter((m) => m.type === 'heartbeat')).toEqual([]);
    expect(first?.ready.readStates).toEqual([]);
    c.stabilize();
    expect(reads(c, 2n)).toEqual(['n1@4']);
  });

  it('a follower forwards the read and gets the leader’s index back', () => {
    const c = cluster();
    c.raw(3n).readIndex(bytes('f1'));
    c.drain(3n);
    expect(c.inflight.map((m) => [m.type, m.from, m.to, text(m.context)])).toEqual([['readIndex', 3n, 1n, 'f1']]);
    c.stabilize();
    expect(reads(c, 3n)).toEqual(['f1@3']);
    expect(reads(c, 1n)).toEqual([]);
  });

  it('a follower without a leader drops the read', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.raw(2n).readIndex(bytes('x'));
    c.drain(2n);
    expect(c.inflight).toEqual([]);
    expect(reads(c, 2n)).toEqual([]);
  });

  it('a single voter answers at once with its commit index', () => {
    const c = Cluster.bootstrap([1n]);
    c.elect(1n);
    c.raw(1n).readIndex(bytes('solo'));
    c.stabilize();
    expect(reads(c, 1n)).toEqual(['solo@2']);
  });

  it('refuses an empty context, which could never be matched to its answer', () => {
    const c = cluster();
    expect(() => c.raw(1n).readIndex(new Uint8Array())).toThrow(RaftError);
  });

  it('a read on a leader that is deposed before the round completes is never answered', () => {
    const c = cluster();
    c.raw(1n).readIndex(bytes('r1'));
    c.drain(1n);
    c.dropQueued(2n);
    c.dropQueued(3n);
    c.raw(2n).campaign();
    c.stabilize();
    expect(c.leaders()).toEqual([2n]);
    expect(reads(c, 1n)).toEqual([]);
  });
});
