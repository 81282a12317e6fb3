// MemoryStorage is what every test, the simulation and the server's log cache stand on, so its edge cases
// (the dummy entry at the snapshot index, compaction bounds, truncating appends) are pinned down here.
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../src/raft/types.js';
import { RaftError } from '../../src/raft/errors.js';
import { MemoryStorage, bootstrapStorage, limitSize } from '../../src/raft/storage.js';
import { entrySize } from '../../src/raft/types.js';

const ent = (index: number, term: number, data = ''): Entry => ({
  index,
  term,
  type: 'normal',
  data: new TextEncoder().encode(data),
});

/** A storage whose snapshot sits at 3/3 and whose log then holds 4/4 and 5/5 (etcd's classic fixture). */
function fixture(): MemoryStorage {
  const s = new MemoryStorage();
  s.applySnapshot({ metadata: { index: 3, term: 3, confState: { voters: [1n], learners: [] } }, data: new Uint8Array() });
  s.append([ent(4, 4), ent(5, 5)]);
  return s;
}

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof RaftError) return e.code;
    throw e;
  }
  return 'no error';
}

const indexes = (es: readonly Entry[]): number[] => es.map((e) => e.index);

describe('MemoryStorage', () => {
  it('starts empty: first index 1, last index 0, term(0) = 0, no entries', () => {
    const s = new MemoryStorage();
    expect(s.firstIndex()).toBe(1);
    expect(s.lastIndex()).toBe(0);
    expect(s.term(0)).toBe(0);
    expect(codeOf(() => s.term(1))).toBe('RAFT_UNAVAILABLE');
    expect(codeOf(() => s.entries(1, 1, Infinity))).toBe('RAFT_UNAVAILABLE');
    expect(s.initialState()).toEqual({ hardState: { term: 0, vote: 0n, commit: 0 }, confState: { voters: [], learners: [] } });
  });

  it('answers term() from the snapshot index through the last index, and errors outside', () => {
    const s = fixture();
    expect(codeOf(() => s.term(2))).toBe('RAFT_COMPACTED');
    expect(s.term(3)).toBe(3);
    expect(s.term(4)).toBe(4);
    expect(s.term(5)).toBe(5);
    expect(codeOf(() => s.term(6))).toBe('RAFT_UNAVAILABLE');
  });

  it('returns entries in [lo, hi) and refuses compacted or missing ranges', () => {
    const s = fixture();
    expect(codeOf(() => s.entries(2, 4, Infinity))).toBe('RAFT_COMPACTED');
    // lo equal to the snapshot index asks for the dummy entry, which is not a real entry.
    expect(codeOf(() => s.entries(3, 4, Infinity))).toBe('RAFT_COMPACTED');
    expect(indexes(s.entries(4, 5, Infinity))).toEqual([4]);
    expect(indexes(s.entries(4, 6, Infinity))).toEqual([4, 5]);
    expect(s.entries(5, 5, Infinity)).toEqual([]);
    expect(codeOf(() => s.entries(4, 7, Infinity))).toBe('RAFT_UNAVAILABLE');
  });

  it('limits entries by size but always returns at least one', () => {
    const s = new MemoryStorage();
    s.append([ent(1, 1, 'aaaa'), ent(2, 1, 'bb'), ent(3, 1, 'c')]);
    const [a, b] = [entrySize(ent(1, 1, 'aaaa')), entrySize(ent(2, 1, 'bb'))];
    expect(indexes(s.entries(1, 4, 0))).toEqual([1]);
    expect(indexes(s.entries(1, 4, a))).toEqual([1]);
    expect(indexes(s.entries(1, 4, a + b - 1))).toEqual([1]);
    expect(indexes(s.entries(1, 4, a + b))).toEqual([1, 2]);
    expect(indexes(s.entries(1, 4, Infinity))).toEqual([1, 2, 3]);
  });

  it('limitSize keeps whole entries only and never returns an empty slice for non-empty input', () => {
    const es = [ent(1, 1, 'x'), ent(2, 1, 'y'), ent(3, 1, 'z')];
    const one = entrySize(es[0] as Entry);
    expect(limitSize([], 0)).toEqual([]);
    expect(indexes(limitSize(es, 0))).toEqual([1]);
    expect(indexes(limitSize(es, 2 * one))).toEqual([1, 2]);
    expect(indexes(limitSize(es, 3 * one))).toEqual([1, 2, 3]);
  });

  it('compacts up to and including an index, keeping that index as the term anchor', () => {
    const s = fixture();
    expect(codeOf(() => s.compact(2))).toBe('RAFT_COMPACTED');
    expect(codeOf(() => s.compact(3))).toBe('RAFT_COMPACTED');
    s.compact(4);
    expect(s.firstIndex()).toBe(5);
    expect(s.lastIndex()).toBe(5);
    expect(s.term(4)).toBe(4);
    expect(codeOf(() => s.term(3))).toBe('RAFT_COMPACTED');
    expect(codeOf(() => s.entries(4, 6, Infinity))).toBe('RAFT_COMPACTED');
    expect(indexes(s.entries(5, 6, Infinity))).toEqual([5]);
    // Compacting everything leaves an empty log that still knows the last term.
    s.compact(5);
    expect(s.firstIndex()).toBe(6);
    expect(s.lastIndex()).toBe(5);
    expect(s.term(5)).toBe(5);
  });

  it('refuses to compact past the last index: that is a caller bug', () => {
    expect(codeOf(() => fixture().compact(6))).toBe('RAFT_INVARIANT');
  });

  it('creates snapshots at applied indexes, never older than the current one', () => {
    const s = fixture();
    const cs = { voters: [1n, 2n, 3n], learners: [4n] };
    expect(codeOf(() => s.createSnapshot(3, cs, new Uint8Array()))).toBe('RAFT_SNAPSHOT_OUT_OF_DATE');
    expect(codeOf(() => s.createSnapshot(6, cs, new Uint8Array()))).toBe('RAFT_INVARIANT');
    const snap = s.createSnapshot(4, cs, new Uint8Array([7]));
    expect(snap.metadata).toEqual({ index: 4, term: 4, confState: cs });
    expect(s.snapshot()).toBe(snap);
    // Creating a snapshot does not compact: the log is untouched until compact() is called.
    expect(s.firstIndex()).toBe(4);
    expect(s.initialState().confState).toEqual(cs);
    // Without a conf state the previous one carries over.
    expect(s.createSnapshot(5, undefined, new Uint8Array()).metadata.confState).toEqual(cs);
  });

  it('applies a newer snapshot by replacing the whole log, and refuses an older one', () => {
    const s = fixture();
    const snap = (index: number, term: number) => ({
      metadata: { index, term, confState: { voters: [1n, 2n], learners: [] } },
      data: new Uint8Array(),
    });
    expect(codeOf(() => s.applySnapshot(snap(3, 3)))).toBe('RAFT_SNAPSHOT_OUT_OF_DATE');
    expect(codeOf(() => s.applySnapshot(snap(2, 2)))).toBe('RAFT_SNAPSHOT_OUT_OF_DATE');
    s.applySnapshot(snap(10, 6));
    expect(s.firstIndex()).toBe(11);
    expect(s.lastIndex()).toBe(10);
    expect(s.term(10)).toBe(6);
    expect(codeOf(() => s.term(5))).toBe('RAFT_COMPACTED');
    expect(s.initialState().confState).toEqual({ voters: [1n, 2n], learners: [] });
  });

  describe('append', () => {
    const cases: Array<{ name: string; add: Entry[]; want: Array<[number, number]> }> = [
      { name: 'identical entries are a no-op', add: [ent(4, 4), ent(5, 5)], want: [[4, 4], [5, 5]] },
      { name: 'extends past the end', add: [ent(4, 4), ent(5, 5), ent(6, 5)], want: [[4, 4], [5, 5], [6, 5]] },
      { name: 'truncates a conflicting suffix', add: [ent(4, 4), ent(5, 6), ent(6, 6)], want: [[4, 4], [5, 6], [6, 6]] },
      { name: 'replaces from the first entry', add: [ent(4, 6)], want: [[4, 6]] },
      { name: 'drops the already compacted prefix', add: [ent(2, 3), ent(3, 3), ent(4, 5)], want: [[4, 5]] },
      { name: 'ignores entries that are entirely compacted', add: [ent(2, 3), ent(3, 3)], want: [[4, 4], [5, 5]] },
      { name: 'appends directly after the last index', add: [ent(6, 5)], want: [[4, 4], [5, 5], [6, 5]] },
      { name: 'ignores an empty batch', add: [], want: [[4, 4], [5, 5]] },
    ];
    for (const c of cases) {
      it(c.name, () => {
        const s = fixture();
        s.append(c.add);
        const got = s.entries(s.firstIndex(), s.lastIndex() + 1, Infinity).map((e) => [e.index, e.term]);
        expect(got).toEqual(c.want);
      });
    }

    it('refuses a gap after the last index', () => {
      expect(codeOf(() => fixture().append([ent(7, 5)]))).toBe('RAFT_INVARIANT');
    });
  });

  it('keeps the hard state it is given', () => {
    const s = new MemoryStorage();
    s.setHardState({ term: 3, vote: 2n, commit: 7 });
    expect(s.getHardState()).toEqual({ term: 3, vote: 2n, commit: 7 });
    expect(s.initialState().hardState).toEqual({ term: 3, vote: 2n, commit: 7 });
  });

  it('reports a configuration recorded with setConfState until a snapshot replaces it', () => {
    const s = fixture();
    s.setConfState({ voters: [1n, 2n], learners: [3n] });
    expect(s.initialState().confState).toEqual({ voters: [1n, 2n], learners: [3n] });
    s.applySnapshot({ metadata: { index: 9, term: 5, confState: { voters: [7n], learners: [] } }, data: new Uint8Array() });
    expect(s.initialState().confState).toEqual({ voters: [7n], learners: [] });
  });

  it('bootstrapStorage yields a committed snapshot at 1/1 holding the initial configuration', () => {
    const s = bootstrapStorage([1n, 2n, 3n], [4n]);
    expect(s.initialState()).toEqual({
      hardState: { term: 1, vote: 0n, commit: 1 },
      confState: { voters: [1n, 2n, 3n], learners: [4n] },
    });
    expect(s.firstIndex()).toBe(2);
    expect(s.lastIndex()).toBe(1);
    expect(s.term(1)).toBe(1);
    expect(s.snapshot().metadata.index).toBe(1);
  });
});
