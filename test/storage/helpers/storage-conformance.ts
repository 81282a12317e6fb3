// The Storage conformance suite: what the core may rely on from any storage, run unchanged against
// MemoryStorage (the reference) and DurableRaftStorage. Every case also restarts the storage at the end —
// a no-op for memory, close-and-reopen for the durable one — and asserts the same view comes back.
import { afterEach, describe, expect, it } from 'vitest';
import type { ConfState, Entry, EntryType, HardState, NodeId, Snapshot } from '../../../src/raft/types.js';
import type { Storage } from '../../../src/raft/storage.js';
import { RaftError } from '../../../src/raft/errors.js';
import { entrySize } from '../../../src/raft/types.js';

/** A storage plus its write side, made async so one suite fits both implementations. */
export interface StorageSubject {
  readonly storage: Storage;
  append(entries: readonly Entry[]): Promise<void>;
  setHardState(hs: HardState): Promise<void>;
  applySnapshot(snap: Snapshot): Promise<void>;
  createSnapshot(i: number, cs: ConfState | undefined, data: Uint8Array): Promise<Snapshot>;
  compact(i: number): Promise<void>;
  setConfState(cs: ConfState): Promise<void>;
}

export interface StorageHarness {
  readonly name: string;
  create(): Promise<StorageSubject>;
  /** What survives a process restart. */
  restart(s: StorageSubject): Promise<StorageSubject>;
  dispose(s: StorageSubject): Promise<void>;
}

const enc = new TextEncoder();

export function entry(index: number, term: number, data = `e${index}t${term}`, type: EntryType = 'normal'): Entry {
  return { index, term, type, data: enc.encode(data) };
}

/** Entries [from, to] all in one term. */
export function run(from: number, to: number, term: number): Entry[] {
  return Array.from({ length: to - from + 1 }, (_, k) => entry(from + k, term));
}

export function snapshotAt(index: number, term: number, voters: NodeId[] = [1n, 2n, 3n], data = `state@${index}`): Snapshot {
  return { metadata: { index, term, confState: { voters, learners: [] } }, data: enc.encode(data) };
}

async function codeOf(p: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    if (e instanceof RaftError) return e.code;
    throw e;
  }
  return 'no error';
}

/** Everything the core can observe through Storage, in a form toEqual compares well. */
export function viewOf(s: Storage): unknown {
  const first = s.firstIndex();
  const last = s.lastIndex();
  const snap = s.snapshot();
  return {
    first,
    last,
    anchorTerm: s.term(first - 1),
    log: last >= first ? s.entries(first, last + 1, Infinity).map((e) => ({ ...e, data: Buffer.from(e.data).toString('hex') })) : [],
    snapshot: { ...snap.metadata, data: Buffer.from(snap.data).toString('hex') },
    initial: s.initialState(),
  };
}

const logOf = (s: Storage): Array<[number, number]> =>
  s.lastIndex() < s.firstIndex() ? [] : s.entries(s.firstIndex(), s.lastIndex() + 1, Infinity).map((e) => [e.index, e.term]);

export function storageConformance(h: StorageHarness): void {
  describe(`Storage conformance: ${h.name}`, () => {
    let subject: StorageSubject | undefined;
    afterEach(async () => {
      if (subject) await h.dispose(subject);
      subject = undefined;
    });

    /** Creates the subject, runs the case, then restarts and checks nothing the core sees has changed. */
    const withSubject = (name: string, body: (s: StorageSubject) => Promise<void>): void => {
      it(name, async () => {
        subject = await h.create();
        await body(subject);
        const before = viewOf(subject.storage);
        subject = await h.restart(subject);
        expect(viewOf(subject.storage), 'after restart').toEqual(before);
      });
    };

    withSubject('a new storage is empty: first 1, last 0, term(0) 0, empty initial state', async (s) => {
      expect(s.storage.firstIndex()).toBe(1);
      expect(s.storage.lastIndex()).toBe(0);
      expect(s.storage.term(0)).toBe(0);
      expect(await codeOf(() => s.storage.term(1))).toBe('RAFT_UNAVAILABLE');
      expect(await codeOf(() => s.storage.entries(1, 1, Infinity))).toBe('RAFT_UNAVAILABLE');
      expect(s.storage.initialState()).toEqual({ hardState: { term: 0, vote: 0n, commit: 0 }, confState: { voters: [], learners: [] } });
    });

    withSubject('keeps entries with their term, type and data, byte for byte', async (s) => {
      const cc = entry(3, 2, '{"type":"addNode","nodeId":4}', 'confChange');
      const binary: Entry = { index: 4, term: 2, type: 'normal', data: new Uint8Array([0, 255, 1, 254, 0]) };
      const empty: Entry = { index: 5, term: 3, type: 'normal', data: new Uint8Array(0) };
      await s.append([entry(1, 1), entry(2, 1)]);
      await s.append([cc, binary, empty]);
      const got = s.storage.entries(1, 6, Infinity);
      expect(got.map((e) => [e.index, e.term, e.type, Buffer.from(e.data).toString('hex')])).toEqual(
        [entry(1, 1), entry(2, 1), cc, binary, empty].map((e) => [e.index, e.term, e.type, Buffer.from(e.data).toString('hex')]),
      );
      expect([s.storage.term(3), s.storage.term(5)]).toEqual([2, 3]);
    });

    withSubject('an append that overlaps the log replaces everything from its first index on', async (s) => {
      await s.append(run(1, 6, 1));
      await s.append([entry(4, 2), entry(5, 2)]); // 6 had term 1: it must go, though the new entries stop at 5
      expect(logOf(s.storage)).toEqual([[1, 1], [2, 1], [3, 1], [4, 2], [5, 2]]);
      expect(await codeOf(() => s.storage.term(6))).toBe('RAFT_UNAVAILABLE');
      await s.append([entry(2, 3)]);
      expect(logOf(s.storage)).toEqual([[1, 1], [2, 3]]);
      await s.append(run(3, 4, 3));
      expect(logOf(s.storage)).toEqual([[1, 1], [2, 3], [3, 3], [4, 3]]);
    });

    withSubject('refuses an append that would leave a gap, and keeps the log as it was', async (s) => {
      await s.append(run(1, 3, 1));
      expect(await codeOf(s.append([entry(5, 1)]))).toBe('RAFT_INVARIANT');
      expect(logOf(s.storage)).toEqual([[1, 1], [2, 1], [3, 1]]);
      await s.append([entry(4, 1)]); // and stays usable
      expect(s.storage.lastIndex()).toBe(4);
    });

    withSubject('keeps the hard state it was given last', async (s) => {
      await s.append(run(1, 7, 2));
      await s.setHardState({ term: 2, vote: 1n, commit: 3 });
      await s.setHardState({ term: 3, vote: 2n, commit: 7 });
      expect(s.storage.initialState().hardState).toEqual({ term: 3, vote: 2n, commit: 7 });
    });

    withSubject('creates a snapshot at an index in the log without touching the log', async (s) => {
      await s.append([...run(1, 3, 1), ...run(4, 6, 2)]);
      const cs = { voters: [1n, 2n, 3n], learners: [4n] };
      const snap = await s.createSnapshot(5, cs, enc.encode('app state at 5'));
      expect(snap.metadata).toEqual({ index: 5, term: 2, confState: cs });
      expect(s.storage.snapshot()).toEqual(snap);
      expect(s.storage.firstIndex()).toBe(1);
      expect(s.storage.initialState().confState).toEqual(cs);
      expect(await codeOf(s.createSnapshot(5, cs, new Uint8Array()))).toBe('RAFT_SNAPSHOT_OUT_OF_DATE');
      expect(await codeOf(s.createSnapshot(4, cs, new Uint8Array()))).toBe('RAFT_SNAPSHOT_OUT_OF_DATE');
      expect(await codeOf(s.createSnapshot(7, cs, new Uint8Array()))).toBe('RAFT_INVARIANT');
      // Without a configuration, the previous snapshot's carries over.
      expect((await s.createSnapshot(6, undefined, new Uint8Array())).metadata.confState).toEqual(cs);
    });

    withSubject('compaction drops entries up to an index and keeps its term as the log anchor', async (s) => {
      await s.append([...run(1, 4, 1), ...run(5, 8, 2)]);
      await s.createSnapshot(6, { voters: [1n], learners: [] }, enc.encode('s6'));
      await s.compact(5);
      expect(s.storage.firstIndex()).toBe(6);
      expect(s.storage.term(5)).toBe(2);
      expect(await codeOf(() => s.storage.term(4))).toBe('RAFT_COMPACTED');
      expect(await codeOf(() => s.storage.entries(5, 7, Infinity))).toBe('RAFT_COMPACTED');
      expect(logOf(s.storage)).toEqual([[6, 2], [7, 2], [8, 2]]);
      expect(await codeOf(s.compact(5))).toBe('RAFT_COMPACTED');
      expect(await codeOf(s.compact(3))).toBe('RAFT_COMPACTED');
      expect(await codeOf(s.compact(9))).toBe('RAFT_INVARIANT');
      await s.compact(6); // up to the snapshot itself
      expect([s.storage.firstIndex(), s.storage.term(6)]).toEqual([7, 2]);
      // Appends after compaction carry on from the last index; fully compacted ones are ignored.
      await s.append([entry(3, 1), entry(4, 1)]);
      await s.append([entry(6, 2), entry(7, 2), entry(8, 2), entry(9, 3)]);
      expect(logOf(s.storage)).toEqual([[7, 2], [8, 2], [9, 3]]);
    });

    withSubject('applying a snapshot replaces the whole log; an older one is refused', async (s) => {
      await s.append(run(1, 5, 1));
      await s.setConfState({ voters: [1n, 2n], learners: [] });
      await s.applySnapshot(snapshotAt(10, 4, [1n, 2n, 3n]));
      expect([s.storage.firstIndex(), s.storage.lastIndex(), s.storage.term(10)]).toEqual([11, 10, 4]);
      expect(await codeOf(() => s.storage.term(5))).toBe('RAFT_COMPACTED');
      // The configuration comes from the snapshot now, not the earlier applied-index one.
      expect(s.storage.initialState().confState).toEqual({ voters: [1n, 2n, 3n], learners: [] });
      expect(await codeOf(s.applySnapshot(snapshotAt(10, 4)))).toBe('RAFT_SNAPSHOT_OUT_OF_DATE');
      expect(await codeOf(s.applySnapshot(snapshotAt(7, 4)))).toBe('RAFT_SNAPSHOT_OUT_OF_DATE');
      await s.append(run(11, 12, 5));
      expect(logOf(s.storage)).toEqual([[11, 5], [12, 5]]);
      expect(Buffer.from(s.storage.snapshot().data).toString()).toBe('state@10');
    });

    withSubject('the configuration at the applied index overrides the snapshot one until the next snapshot', async (s) => {
      await s.applySnapshot(snapshotAt(1, 1, [1n, 2n, 3n]));
      await s.append(run(2, 6, 2));
      const grown = { voters: [1n, 2n, 3n], learners: [4n] };
      await s.setConfState(grown);
      expect(s.storage.initialState().confState).toEqual(grown);
      expect(s.storage.snapshot().metadata.confState).toEqual({ voters: [1n, 2n, 3n], learners: [] });
      const promoted = { voters: [1n, 2n, 3n, 4n], learners: [] };
      await s.createSnapshot(5, promoted, new Uint8Array());
      await s.setConfState(promoted);
      expect(s.storage.initialState().confState).toEqual(promoted);
    });

    withSubject('limits entries() by size but always returns the first', async (s) => {
      await s.append([entry(1, 1, 'aaaa'), entry(2, 1, 'bb'), entry(3, 1, 'c')]);
      const [a, b] = [entrySize(entry(1, 1, 'aaaa')), entrySize(entry(2, 1, 'bb'))];
      const idx = (max: number): number[] => s.storage.entries(1, 4, max).map((e) => e.index);
      expect([idx(0), idx(a + b - 1), idx(a + b), idx(Infinity)]).toEqual([[1], [1], [1, 2], [1, 2, 3]]);
      expect(s.storage.entries(2, 2, Infinity)).toEqual([]);
      expect(await codeOf(() => s.storage.entries(2, 5, Infinity))).toBe('RAFT_UNAVAILABLE');
    });

    withSubject('a long log with varied payloads survives as written', async (s) => {
      let term = 1;
      for (let i = 1; i <= 3000; i += 100) {
        if (i % 700 === 1) term++;
        await s.append(Array.from({ length: 100 }, (_, k) => entry(i + k, term, 'x'.repeat((i + k) % 257))));
      }
      await s.setHardState({ term, vote: 2n, commit: 2900 });
      await s.createSnapshot(2500, { voters: [1n, 2n, 3n], learners: [] }, new Uint8Array(5000).fill(7));
      await s.compact(2000);
      expect([s.storage.firstIndex(), s.storage.lastIndex()]).toEqual([2001, 3000]);
      expect(s.storage.entries(2001, 3001, Infinity).every((e) => e.data.length === e.index % 257)).toBe(true);
    });
  });
}
