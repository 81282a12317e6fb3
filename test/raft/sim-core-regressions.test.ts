// Core bugs the simulation found, each pinned as a small direct test next to the seed that found it.
import { describe, expect, it } from 'vitest';
import { RawNode } from '../../src/raft/raw-node.js';
import { SeededRng } from '../../src/raft/rng.js';
import { bootstrapStorage } from '../../src/raft/storage.js';
import { msg } from '../../src/raft/types.js';

describe('regressions found by the simulation', () => {
  it('a forwarded proposal that bounces back to its proposer is dropped, not thrown at the transport', () => {
    // Found with `npm run sim -- --seeds 72-72 --nodes 3 --steps 600`: node 1 proposed as a follower, the
    // proposal was forwarded to node 2, which forwarded it back to node 1 (the leader by then, mid-transfer).
    // Its `from` is node 1's own id, so the core took it for a local proposal and threw from step().
    const n = new RawNode({ id: 1n, electionTick: 10, heartbeatTick: 1, storage: bootstrapStorage([1n, 2n, 3n]), rng: new SeededRng(1) });
    n.campaign(); // a candidate refuses proposals
    const data = new TextEncoder().encode('x');
    expect(() => n.propose(data)).toThrow(/proposal dropped/);
    const bounced = msg({ type: 'prop', from: 1n, to: 1n, entries: [{ term: 0, index: 0, type: 'normal', data }] });
    expect(() => n.step(bounced)).not.toThrow();
  });
});
