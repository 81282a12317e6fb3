// DurableRaftStorage beyond the shared conformance suite: Readies as the core emits them, a restart of a
// real RawNode from disk, group commit, snapshot files, segment rotation and deletion, the checks that
// refuse writes which would make the directory unopenable, and a seeded random walk (with tiny segments,
// so rotation and deletion happen all the time) compared op by op against MemoryStorage.
import { afterEach, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import type { ConfState, Entry } from '../../src/raft/types.js';
import { MemoryStorage } from '../../src/raft/storage.js';
import { RaftError } from '../../src/raft/errors.js';
import { RawNode } from '../../src/raft/raw-node.js';
import { SeededRng } from '../../src/raft/rng.js';
import { DurableRaftStorage } from '../../src/storage/raft-storage.js';
import type { DurableRaftStorageOptions } from '../../src/storage/raft-storage.js';
import { StorageError } from '../../src/storage/errors.js';
import { TempDirs } from './helpers/temp-dirs.js';
import { entry, run, snapshotAt, viewOf } from './helpers/storage-conformance.js';

const dirs = new TempDirs();
const open: DurableRaftStorage[] = [];
const optionsOf = new WeakMap<DurableRaftStorage, DurableRaftStorageOptions>();

async function openStore(dir: string, opts: DurableRaftStorageOptions = {}): Promise<DurableRaftStorage> {
  const s = await DurableRaftStorage.open(dir, opts);
  open.push(s);
  optionsOf.set(s, opts);
  return s;
}

/** Closes and opens again, with the same options. */
async function reopen(s: DurableRaftStorage): Promise<DurableRaftStorage> {
  await s.close();
  return openStore(s.dir, optionsOf.get(s));
}

const filesOf = async (dir: string, suffix: string): Promise<string[]> => (await fs.readdir(dir)).filter((n) => n.endsWith(suffix)).sort();

afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  await dirs.removeAll();
});

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof RaftError || e instanceof StorageError) return e.code;
    throw e;
  }
  return 'no error';
}

const terms = (s: DurableRaftStorage): Array<[number, number]> =>
  s.lastIndex() < s.firstIndex() ? [] : s.entries(s.firstIndex(), s.lastIndex() + 1, Infinity).map((e) => [e.index, e.term]);

describe('DurableRaftStorage', () => {
  it('persists a Ready as one unit: snapshot, entries and hard state', async () => {
    let s = await openStore(await dirs.make());
    await s.save({
      snapshot: snapshotAt(5, 2),
      entries: run(6, 8, 3),
      hardState: { term: 3, vote: 1n, commit: 7 },
      mustSync: true,
    });
    s = await reopen(s);
    expect(s.initialState()).toEqual({ hardState: { term: 3, vote: 1n, commit: 7 }, confState: { voters: [1n, 2n, 3n], learners: [] } });
    expect([s.firstIndex(), s.lastIndex(), s.term(5)]).toEqual([6, 8, 2]);
    expect(terms(s)).toEqual([[6, 3], [7, 3], [8, 3]]);
  });

  it('serves a real RawNode: a single-member cluster commits, restarts from disk and carries on', async () => {
    const dir = await dirs.make();
    let s = await openStore(dir);
    await s.save({ entries: [], snapshot: snapshotAt(1, 1, [1n], ''), hardState: { term: 1, vote: 0n, commit: 1 }, mustSync: true });
    const drive = async (node: RawNode, storage: DurableRaftStorage): Promise<Entry[]> => {
      const applied: Entry[] = [];
      while (node.hasReady()) {
        const rd = node.ready();
        await storage.save(rd);
        applied.push(...rd.committedEntries);
        node.advance();
      }
      return applied;
    };
    let node = new RawNode({ id: 1n, electionTick: 10, heartbeatTick: 1, storage: s, rng: new SeededRng(1) });
    node.campaign();
    await drive(node, s);
    for (let i = 0; i < 5; i++) node.propose(new TextEncoder().encode(`put k${i}`));
    const applied = await drive(node, s);
    const before = node.status();
    expect(before.softState.raftState).toBe('leader');
    expect(applied.filter((e) => e.data.length > 0)).toHaveLength(5);

    s = await reopen(s);
    node = new RawNode({ id: 1n, electionTick: 10, heartbeatTick: 1, storage: s, rng: new SeededRng(2), applied: before.applied });
    expect(node.status().hardState).toEqual(before.hardState);
    expect(node.status().lastIndex).toBe(before.lastIndex);
    node.campaign();
    await drive(node, s);
    node.propose(new TextEncoder().encode('after restart'));
    const more = await drive(node, s);
    expect(more.map((e) => new TextDecoder().decode(e.data))).toContain('after restart');
    expect(node.status().hardState.term).toBe(before.hardState.term + 1);
  });

  it('group-commits concurrent saves, resolving them in order, same result as one by one', async () => {
    const s = await openStore(await dirs.make());
    const resolved: number[] = [];
    const saves: Array<Promise<void>> = [];
    for (let b = 0; b < 50; b++) {
      const from = b * 10 + 1;
      const hardState = { term: 1, vote: 1n, commit: from - 1 };
      saves.push(s.save({ entries: run(from, from + 9, 1), hardState, mustSync: b % 2 === 0 }).then(() => void resolved.push(b)));
    }
    // A conflicting rewrite of the tail and a refused gap in the same burst.
    saves.push(s.save({ entries: run(495, 497, 2), mustSync: true }).then(() => void resolved.push(50)));
    const gap = s.save({ entries: [entry(600, 2)], mustSync: true });
    saves.push(s.save({ entries: [entry(498, 2)], mustSync: true }).then(() => void resolved.push(51)));
    expect(await codeOf(gap)).toBe('RAFT_INVARIANT');
    await Promise.all(saves);
    expect(resolved).toEqual(Array.from({ length: 52 }, (_, i) => i));
    expect(s.lastIndex()).toBe(498);
    expect(s.term(494)).toBe(1);
    expect(s.term(495)).toBe(2);
    const again = await reopen(s);
    expect(viewOf(again)).toEqual(viewOf(s));
  });

  it('keeps snapshot data in a file of its own and only the latest snapshot', async () => {
    const dir = await dirs.make();
    let s = await openStore(dir);
    await s.save({ entries: run(1, 10, 1), mustSync: true });
    const big = Uint8Array.from({ length: 3500 }, (_, i) => (i * 7) % 251);
    await s.createSnapshot(5, { voters: [1n], learners: [] }, big);
    s = await reopen(s);
    expect(Buffer.from(s.snapshot().data).equals(Buffer.from(big))).toBe(true);
    await s.createSnapshot(8, undefined, new Uint8Array([1, 2, 3]));
    await s.idle();
    expect(await filesOf(dir, '.snap')).toEqual(['0000000000000008.snap']);
    s = await reopen(s);
    expect([...s.snapshot().data]).toEqual([1, 2, 3]);
    expect(s.snapshot().metadata).toEqual({ index: 8, term: 1, confState: { voters: [1n], learners: [] } });
  });

  it('rotates segments as the log grows and deletes the ones compaction has emptied', async () => {
    const dir = await dirs.make();
    let s = await openStore(dir, { segmentBytes: 4096 });
    const payload = (i: number): Uint8Array => new Uint8Array(200).fill(i & 0xff);
    for (let from = 1; from <= 400; from += 10) {
      const ents = run(from, from + 9, 1).map((e) => ({ ...e, data: payload(e.index) }));
      await s.save({ entries: ents, hardState: { term: 1, vote: 1n, commit: from + 9 }, mustSync: from % 20 === 1 });
    }
    const grown = await filesOf(dir, '.wal');
    expect(grown.length).toBeGreaterThan(15);
    await s.createSnapshot(390, { voters: [1n], learners: [] }, new Uint8Array([9]));
    await s.compact(390);
    await s.idle();
    const left = await filesOf(dir, '.wal');
    expect(left.length).toBeLessThanOrEqual(2);
    expect((left.at(-1) as string) >= (grown.at(-1) as string)).toBe(true);
    s = await reopen(s);
    expect([s.firstIndex(), s.lastIndex(), s.initialState().hardState.commit]).toEqual([391, 400, 400]);
    expect([...s.entries(395, 396, Infinity)[0]!.data.subarray(0, 2)]).toEqual([395 & 0xff, 395 & 0xff]);
    // And it carries on writing where it left off.
    await s.save({ entries: run(401, 450, 1), mustSync: true });
    s = await reopen(s);
    expect(s.lastIndex()).toBe(450);
  });

  it('keeps a multi-megabyte snapshot with the default chunk size', async () => {
    let s = await openStore(await dirs.make());
    const data = new Uint8Array(3 * 1024 * 1024 + 17).map((_, i) => i & 0xff);
    await s.applySnapshot({ metadata: { index: 100, term: 9, confState: { voters: [1n, 2n, 3n], learners: [] } }, data });
    s = await reopen(s);
    expect(Buffer.from(s.snapshot().data).equals(Buffer.from(data))).toBe(true);
  });

  it('refuses to compact past the snapshot: those entries are the only copy', async () => {
    const s = await openStore(await dirs.make());
    await s.save({ entries: run(1, 10, 1), mustSync: true });
    expect(await codeOf(s.compact(3))).toBe('RAFT_INVARIANT');
    await s.createSnapshot(6, { voters: [1n], learners: [] }, new Uint8Array());
    expect(await codeOf(s.compact(7))).toBe('RAFT_INVARIANT');
    await s.compact(6);
    expect(s.firstIndex()).toBe(7);
  });

  it('refuses writes that would leave commit beyond the last index (the directory would not reopen)', async () => {
    const s = await openStore(await dirs.make());
    await s.save({ entries: run(1, 5, 1), hardState: { term: 1, vote: 1n, commit: 4 }, mustSync: true });
    expect(await codeOf(s.save({ entries: [], hardState: { term: 1, vote: 1n, commit: 6 }, mustSync: true }))).toBe('RAFT_INVARIANT');
    // Truncating committed entries is the same mistake.
    expect(await codeOf(s.save({ entries: [entry(3, 2)], mustSync: true }))).toBe('RAFT_INVARIANT');
    expect(terms(s)).toEqual(run(1, 5, 1).map((e) => [e.index, e.term]));
    expect((await reopen(s)).initialState().hardState.commit).toBe(4);
  });

  it('close() waits for queued saves; writes after it are refused with STORAGE_CLOSED', async () => {
    const s = await openStore(await dirs.make());
    const pending = [s.save({ entries: run(1, 3, 1), mustSync: true }), s.save({ entries: run(4, 6, 1), mustSync: false })];
    await s.close();
    await Promise.all(pending);
    expect(await codeOf(s.save({ entries: [entry(7, 1)], mustSync: true }))).toBe('STORAGE_CLOSED');
    expect(await codeOf(s.compact(1))).toBe('STORAGE_CLOSED');
    expect((await openStore(s.dir)).lastIndex()).toBe(6);
  });

  it('after a failed write it refuses every later one, and keeps serving what is known to be on disk', async () => {
    const s = await openStore(await dirs.make());
    await s.save({ entries: run(1, 3, 1), mustSync: true });
    // White-box: close the log's files underneath, as a disk failure would, so the next write fails.
    await (s as unknown as { wal: { close(): Promise<void> } }).wal.close();
    const failed = s.save({ entries: run(4, 5, 1), mustSync: true });
    const queued = s.save({ entries: run(6, 6, 1), mustSync: true });
    expect(await codeOf(failed)).toBe('STORAGE_IO');
    expect(await codeOf(queued)).toBe('STORAGE_IO');
    expect(await codeOf(s.save({ entries: [], hardState: { term: 1, vote: 0n, commit: 1 }, mustSync: true }))).toBe('STORAGE_IO');
    expect([s.firstIndex(), s.lastIndex()]).toEqual([1, 3]);
  });

  it('a refused write in a burst leaves the others intact, whether or not it needed the mirror', async () => {
    const s = await openStore(await dirs.make());
    const results = await Promise.allSettled([
      s.save({ entries: run(1, 4, 1), mustSync: true }),
      s.compact(2), // no snapshot covers 2 yet
      s.createSnapshot(3, { voters: [1n], learners: [] }, new Uint8Array([3])),
      s.compact(2),
      s.save({ entries: run(5, 6, 1), mustSync: true }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    const again = await reopen(s);
    expect([again.firstIndex(), again.lastIndex(), again.snapshot().metadata.index]).toEqual([3, 6, 3]);
  });
});

/**
 * A seeded random walk of Raft-shaped writes (appends that may overwrite the uncommitted tail, hard states,
 * snapshots, compactions, installed snapshots, configurations), some issued concurrently, some followed by
 * a restart. After every step the durable store must look exactly like MemoryStorage given the same writes.
 */
describe('DurableRaftStorage against MemoryStorage, seeded random walk', () => {
  const seeds = [1, 2, 3, 4, 5, 6];
  for (const seed of seeds) {
    it(`seed ${seed}`, async () => {
      const rng = new SeededRng(seed);
      const model = new MemoryStorage();
      let s = await openStore(await dirs.make(), { segmentBytes: 1024 + rng.int(2048) });
      let term = 1;
      let commit = 0;
      const cs = (): ConfState => ({ voters: [1n, 2n, 3n].slice(0, 1 + rng.int(3)), learners: rng.int(2) === 0 ? [] : [9n] });
      for (let step = 0; step < 150; step++) {
        const ops: Array<{ what: string; model: () => void; durable: () => Promise<unknown> }> = [];
        const burst = 1 + rng.int(4);
        // Plan a burst against the model as it will be after the previous ops in the burst.
        for (let k = 0; k < burst; k++) {
          const first = model.firstIndex();
          const last = model.lastIndex();
          const snapIndex = model.snapshot().metadata.index;
          const roll = rng.int(100);
          if (roll < 55) {
            if (rng.int(6) === 0) term++;
            const from = Math.max(commit + 1, first, last + 1 - rng.int(4));
            const ents = run(from, from + rng.int(12), term).map((e) => ({ ...e, data: new Uint8Array(rng.int(40)).fill(e.index & 0xff) }));
            commit = Math.min(Math.max(commit, from - 1 + rng.int(ents.length + 1)), from + ents.length - 1);
            const hs = { term, vote: 1n, commit };
            ops.push({ what: `append ${from}..${from + ents.length - 1}`, model: () => (model.append(ents), model.setHardState(hs)), durable: () => s.save({ entries: ents, hardState: hs, mustSync: true }) });
          } else if (roll < 70 && commit > snapIndex) {
            const i = snapIndex + 1 + rng.int(commit - snapIndex);
            const c = rng.int(2) === 0 ? cs() : undefined;
            const data = new Uint8Array(rng.int(300)).fill(i & 0xff);
            ops.push({ what: `createSnapshot ${i}`, model: () => model.createSnapshot(i, c, data), durable: () => s.createSnapshot(i, c, data) });
          } else if (roll < 82 && snapIndex >= first) {
            const i = first + rng.int(snapIndex - first + 1);
            ops.push({ what: `compact ${i}`, model: () => model.compact(i), durable: () => s.compact(i) });
          } else if (roll < 88) {
            const c = cs();
            ops.push({ what: 'setConfState', model: () => model.setConfState(c), durable: () => s.setConfState(c) });
          } else if (roll < 93) {
            // A leader's snapshot overtakes this follower's log.
            term++;
            const i = Math.max(last, snapIndex) + 1 + rng.int(20);
            const snap = snapshotAt(i, term, [1n, 2n, 3n], `installed ${i}`);
            commit = i;
            const hs = { term, vote: 0n, commit };
            ops.push({ what: `install snapshot ${i}`, model: () => (model.applySnapshot(snap), model.setHardState(hs)), durable: () => s.save({ entries: [], snapshot: snap, hardState: hs, mustSync: true }) });
          } else {
            break;
          }
          // Keep the model one step ahead so later ops in the burst are planned on the right shape.
          const op = ops[ops.length - 1];
          op?.model();
        }
        const done = await Promise.allSettled(ops.map((op) => op.durable()));
        const failed = done.findIndex((d) => d.status === 'rejected');
        expect(failed, `seed ${seed} step ${step}: ${ops[failed]?.what} failed: ${String((done[failed] as PromiseRejectedResult | undefined)?.reason)}`).toBe(-1);
        if (rng.int(8) === 0) s = await reopen(s);
        expect(viewOf(s), `seed ${seed} step ${step} after ${ops.map((o) => o.what).join(', ')}`).toEqual(viewOf(model));
      }
      s = await reopen(s);
      expect(viewOf(s), `seed ${seed} final reopen`).toEqual(viewOf(model));
    });
  }
});
