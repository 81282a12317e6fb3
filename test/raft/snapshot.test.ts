// Snapshots and log compaction (Raft §7): a follower that needs compacted entries gets the leader's
// snapshot; while it is in flight the leader sends that follower nothing else; the transport's report
// (or the follower's answer) ends the snapshot state. Followers install only snapshots that move them forward.
import { describe, expect, it } from 'vitest';
import type { Snapshot } from '../../src/raft/types.js';
import { errSnapshotTemporarilyUnavailable } from '../../src/raft/errors.js';
import { MemoryStorage, bootstrapStorage } from '../../src/raft/storage.js';
import { msg } from '../../src/raft/types.js';
import { Cluster, bytes } from './helpers/cluster.js';

/** Leader 1 with 3 cut off; 'a' 'b' 'c' commit without 3 and the leader compacts through index 4. */
function behindCompaction(opts: { checkQuorum?: boolean } = {}): Cluster {
  const c = Cluster.bootstrap([1n, 2n, 3n], opts);
  c.elect(1n);
  c.isolate(3n);
  for (const d of ['a', 'b', 'c']) c.proposeAndStabilize(1n, d);
  c.compact(1n, 4);
  c.heal();
  return c;
}

/** 1 sends a heartbeat round; the answers arrive and 1 handles its reaction (queued, not yet delivered). */
function heartbeatRound(c: Cluster): void {
  c.tick(1n, 5);
  c.drain(1n);
  for (const id of [2n, 3n]) {
    c.deliver(id);
    c.drain(id);
  }
  c.deliver(1n);
  c.drain(1n);
}

/**
 * After a heartbeat round, the leader's probe to 3 is rejected and, the entries 3 needs being compacted,
 * the leader queues a snapshot for it (or would, were one available).
 */
function probeIntoSnapshot(c: Cluster): void {
  heartbeatRound(c);
  c.deliver(3n);
  c.drain(3n);
  c.deliver(1n);
  c.drain(1n);
}

const snaps = (c: Cluster) => c.inflight.filter((m) => m.type === 'snap');

describe('snapshots', () => {
  it('sends a snapshot to a follower that needs compacted entries, and nothing else until it is done', () => {
    const c = behindCompaction();
    probeIntoSnapshot(c);
    expect(snaps(c).map((m) => [m.to, m.snapshot?.metadata.index, m.snapshot?.metadata.term])).toEqual([[3n, 4, 2]]);
    expect(c.raw(1n).status().progress.get(3n)?.state).toBe('snapshot');
    // More proposals go to 2 only.
    c.raw(1n).propose(bytes('d'));
    c.drain(1n);
    expect(c.inflight.filter((m) => m.type === 'app').map((m) => m.to)).toEqual([2n]);
    c.stabilize();
    // 3 installed the snapshot; its answer moved it back to replicate and it got 'c' and 'd'.
    expect(c.raw(1n).status().progress.get(3n)).toMatchObject({ state: 'replicate', match: 6 });
    expect(c.get(3n).appliedData()).toEqual(['a', 'b', 'c', 'd']);
    expect(c.get(3n).storage.snapshot().metadata.index).toBe(4);
  });

  it('a failed send reported by the transport returns the follower to probing, paused until it is heard from', () => {
    const c = behindCompaction();
    probeIntoSnapshot(c);
    c.dropQueued(3n);
    c.raw(1n).reportSnapshot(3n, false);
    expect(c.raw(1n).status().progress.get(3n)).toMatchObject({ state: 'probe', match: 2, next: 3 });
    // Paused: a new proposal does not probe 3.
    c.raw(1n).propose(bytes('d'));
    c.drain(1n);
    expect(c.inflight.filter((m) => m.to === 3n)).toEqual([]);
    // The next heartbeat response unpauses it, and a fresh snapshot goes out.
    c.stabilize();
    heartbeatRound(c);
    expect(snaps(c).map((m) => m.to)).toEqual([3n]);
    c.stabilize();
    expect(c.get(3n).appliedData()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('a successful send reported by the transport resumes probing just past the snapshot', () => {
    const c = behindCompaction();
    probeIntoSnapshot(c);
    c.raw(1n).reportSnapshot(3n, true);
    expect(c.raw(1n).status().progress.get(3n)).toMatchObject({ state: 'probe', next: 5 });
    c.stabilize();
    expect(c.raw(1n).status().progress.get(3n)).toMatchObject({ state: 'replicate', match: 5 });
  });

  it('reports of a snapshot for a follower not in snapshot state are ignored', () => {
    const c = behindCompaction();
    c.raw(1n).reportSnapshot(2n, false);
    expect(c.raw(1n).status().progress.get(2n)?.state).toBe('replicate');
  });

  it('does not waste a snapshot on a follower that has not been heard from recently (check-quorum)', () => {
    const c = behindCompaction({ checkQuorum: true });
    c.isolate(3n);
    // One check-quorum window passes with nothing from 3: it is marked inactive.
    c.tick(1n, 10);
    c.stabilize();
    expect(c.raw(1n).status().progress.get(3n)?.recentActive).toBe(false);
    c.raw(1n).reportUnreachable(3n);
    c.raw(1n).propose(bytes('d'));
    c.drain(1n);
    expect(snaps(c)).toEqual([]);
    expect(c.raw(1n).status().progress.get(3n)?.state).toBe('probe');
  });

  it('retries later when the storage cannot produce a snapshot right now', () => {
    class Flaky extends MemoryStorage {
      failures = 0;
      override snapshot(): Snapshot {
        if (this.failures > 0) {
          this.failures--;
          throw errSnapshotTemporarilyUnavailable();
        }
        return super.snapshot();
      }
    }
    const storage = new Flaky();
    const boot = bootstrapStorage([1n, 2n, 3n]);
    storage.applySnapshot(boot.snapshot());
    storage.setHardState(boot.getHardState());
    const c = new Cluster(1);
    c.add(1n, storage);
    c.add(2n, bootstrapStorage([1n, 2n, 3n]));
    c.add(3n, bootstrapStorage([1n, 2n, 3n]));
    c.elect(1n);
    c.isolate(3n);
    for (const d of ['a', 'b']) c.proposeAndStabilize(1n, d);
    c.compact(1n, 3);
    storage.failures = 1;
    c.heal();
    probeIntoSnapshot(c);
    expect(storage.failures).toBe(0);
    expect(snaps(c)).toEqual([]);
    expect(c.raw(1n).status().progress.get(3n)?.state).toBe('probe');
    c.stabilize();
    heartbeatRound(c);
    c.stabilize();
    expect(c.get(3n).appliedData()).toEqual(['a', 'b']);
  });
});

describe('installing a snapshot on a follower', () => {
  const snapshot = (index: number, term: number, voters = [1n, 2n, 3n]): Snapshot => ({
    metadata: { index, term, confState: { voters, learners: [] } },
    data: new Uint8Array(),
  });
  const snapMsg = (s: Snapshot) => msg({ type: 'snap', from: 1n, to: 2n, term: 2, snapshot: s });

  it('replaces the log and configuration with a newer snapshot and answers with its index', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.raw(2n).step(snapMsg(snapshot(10, 2, [1n, 2n, 3n, 4n])));
    const ev = c.processReady(2n);
    expect(ev?.ready.snapshot?.metadata.index).toBe(10);
    expect(ev?.ready.messages).toMatchObject([{ type: 'appResp', index: 10, reject: false }]);
    expect(c.raw(2n).status()).toMatchObject({ lastIndex: 10, config: { voters: [1n, 2n, 3n, 4n] }, hardState: { term: 2, commit: 10 } });
  });

  it('ignores a snapshot at or below its commit index, answering with the commit index', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.elect(1n);
    c.proposeAndStabilize(1n, 'a');
    c.raw(2n).step(snapMsg(snapshot(2, 2)));
    const ev = c.processReady(2n);
    expect(ev?.ready.snapshot).toBeUndefined();
    expect(ev?.ready.messages).toMatchObject([{ type: 'appResp', index: 3 }]);
    expect(c.get(2n).appliedData()).toEqual(['a']);
  });

  it('when it already holds the snapshot’s last entry, only advances its commit index', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.elect(1n);
    c.isolate(2n);
    c.proposeAndStabilize(1n, 'a'); // 2 never hears that 3 committed
    c.heal();
    // Hand 2 the entry without the commit, then a snapshot at it.
    c.raw(2n).step(msg({ type: 'app', from: 1n, to: 2n, term: 2, index: 2, logTerm: 2, commit: 2, entries: [{ term: 2, index: 3, type: 'normal', data: bytes('a') }] }));
    c.drain(2n);
    c.inflight = [];
    c.raw(2n).step(snapMsg(snapshot(3, 2)));
    const ev = c.processReady(2n);
    expect(ev?.ready.snapshot).toBeUndefined();
    expect(ev?.ready.hardState?.commit).toBe(3);
    expect(ev?.ready.committedEntries.map((e) => e.index)).toEqual([3]);
    expect(c.get(2n).appliedData()).toEqual(['a']);
  });

  it('refuses a snapshot whose configuration does not include it', () => {
    const c = new Cluster(1);
    c.add(4n, new MemoryStorage());
    c.raw(4n).step(msg({ type: 'snap', from: 1n, to: 4n, term: 2, snapshot: snapshot(5, 2) }));
    const ev = c.processReady(4n);
    expect(ev?.ready.snapshot).toBeUndefined();
    expect(ev?.ready.messages).toMatchObject([{ type: 'appResp', index: 0 }]);
    expect(c.raw(4n).status().config).toEqual({ voters: [], learners: [] });
  });

  it('a follower compacting its own log does not disturb replication', () => {
    const c = Cluster.bootstrap([1n, 2n, 3n]);
    c.elect(1n);
    for (const d of ['a', 'b']) c.proposeAndStabilize(1n, d);
    c.compact(2n, 4);
    c.compact(3n, 3);
    c.proposeAndStabilize(1n, 'c');
    expect(c.get(2n).appliedData()).toEqual(['a', 'b', 'c']);
    expect(c.get(2n).storage.firstIndex()).toBe(5);
  });
});
