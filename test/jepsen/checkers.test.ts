// The set, watch and lock checkers on small hand-made histories: each property accepted when it holds
// and flagged, with the right kind, when it is broken.
import { describe, expect, it } from 'vitest';
import { checkLock } from '../../jepsen-lite/src/checkers/lock-checker.js';
import { checkSet } from '../../jepsen-lite/src/checkers/set-checker.js';
import { checkWatch, type WatchCheckInput } from '../../jepsen-lite/src/checkers/watch-checker.js';
import type { OpRecord, Outcome } from '../../jepsen-lite/src/history.js';
import type { WatchEvent, WatcherLog } from '../../jepsen-lite/src/workloads/watcher.js';

let id = 0;
function op(f: string, input: unknown, outcome: Outcome, start: number, end: number, extra: Partial<OpRecord> = {}): OpRecord {
  return { id: id++, process: 0, worker: 0, node: 0, f, input, outcome, start, end, ...extra };
}

describe('set checker', () => {
  const ops = [op('add', 1, 'ok', 0, 1), op('add', 2, 'info', 1, 2), op('add', 3, 'fail', 2, 3), op('add', 4, 'ok', 3, 4)];
  it('accepts a final read with every acknowledged element, with or without unknown ones', () => {
    expect(checkSet(ops, new Map([['n1', [1, 4]], ['n2', [1, 2, 4]]])).valid).toBe(true);
  });
  it('flags a lost acknowledged element and an element whose write failed', () => {
    const r = checkSet(ops, new Map([['n1', [1, 3]]]));
    expect(r.valid).toBe(false);
    expect(r.anomalies.map((a) => a.kind).sort()).toEqual(['lost-write', 'unexpected-element']);
  });
  it('is unknown without any final read', () => {
    expect(checkSet(ops, new Map([['n1', undefined]])).valid).toBe('unknown');
  });
});

describe('lock checker', () => {
  const base = (): OpRecord[] => [
    op('acquire', undefined, 'ok', 0, 1, { worker: 0, output: 10 }),
    op('fenced-add', 1, 'ok', 1, 2, { worker: 0 }),
    op('unfenced-add', 2, 'ok', 2, 3, { worker: 0 }),
    op('release', 10, 'ok', 3, 4, { worker: 0 }),
    op('acquire', undefined, 'ok', 2, 5, { worker: 1, output: 11 }),
    op('fenced-add', 3, 'ok', 5, 6, { worker: 1 }),
    op('unfenced-add', 4, 'ok', 6, 7, { worker: 1 }),
    op('release', 11, 'ok', 7, 8, { worker: 1 }),
  ];
  it('accepts disjoint holds and complete lists', () => {
    const r = checkLock(base(), { fenced: [1, 3], unfenced: [2, 4] });
    expect(r.valid).toBe(true);
    expect(r.warnings).toEqual([]);
  });
  it('reports overlapping holds and unfenced lost updates as warnings, fenced losses as anomalies', () => {
    const ops = base();
    ops[4] = { ...ops[4]!, end: 2.5 }; // worker 1 acquires while worker 0 still holds it (until 3)
    const r = checkLock(ops, { fenced: [3], unfenced: [4] });
    expect(r.valid).toBe(false);
    expect(r.warnings!.map((w) => w.kind).sort()).toEqual(['mutual-exclusion', 'unfenced-lost-update']);
    expect(r.anomalies.map((a) => a.kind)).toEqual(['fenced-lost-update']);
  });
});

function ev(rev: number, key: string, value: string, prev: [string, number, number, number] | null, resp: number, type: 'PUT' | 'DELETE' = 'PUT'): WatchEvent {
  const p = prev ? { value: prev[0], mod: prev[1], create: prev[2], version: prev[3] } : null;
  const version = type === 'DELETE' ? 0 : prev ? prev[3] + 1 : 1;
  const create = type === 'DELETE' ? 0 : prev ? prev[2] : rev;
  return { rev, type, key, value: type === 'DELETE' ? '' : value, create, version, prev: p, resp, stream: 0 };
}

describe('watch checker', () => {
  // rev 2: put a=v1; rev 3: txn a=v2, b=v3; rev 4: delete a.
  const reference = [ev(2, 'a', 'v1', null, 0), ev(3, 'a', 'v2', ['v1', 2, 2, 1], 1), ev(3, 'b', 'v3', null, 1), ev(4, 'a', '', ['v2', 3, 2, 2], 2, 'DELETE')];
  const writes: WatchCheckInput['writes'] = [
    { op: 1, outcome: 'ok', rev: 2, puts: [{ key: 'a', value: 'v1' }] },
    { op: 2, outcome: 'ok', rev: 3, puts: [{ key: 'a', value: 'v2' }, { key: 'b', value: 'v3' }] },
    { op: 3, outcome: 'ok', rev: 4, deleteKey: 'a', deleted: 1 },
  ];
  const watcher = (events: WatchEvent[], extra: Partial<WatcherLog> = {}): WatcherLog => ({
    id: 0,
    startRev: 2,
    events,
    progress: [],
    reconnects: [],
    lastRev: Math.max(1, ...events.map((e) => e.rev)),
    progressRev: 0,
    ...extra,
  });
  const input = (w: WatcherLog[], over: Partial<WatchCheckInput> = {}): WatchCheckInput => ({
    startRev: 2,
    finalRev: 4,
    watchers: w,
    reference,
    writes,
    finalKvs: [{ key: 'b', value: 'v3', create: 3, mod: 3, version: 1 }],
    ...over,
  });
  const kinds = (i: WatchCheckInput): string[] => [...new Set(checkWatch(i).anomalies.map((a) => a.kind))].sort();

  it('accepts a watcher that saw exactly the reference', () => {
    expect(checkWatch(input([watcher(reference)])).valid).toBe(true);
  });
  it('flags a gap (an event skipped on resume)', () => {
    expect(kinds(input([watcher([reference[0]!, reference[3]!])]))).toContain('gap');
  });
  it('flags a duplicate and an unordered delivery', () => {
    expect(kinds(input([watcher([...reference, reference[3]!])]))).toEqual(expect.arrayContaining(['duplicate', 'extra']));
    expect(kinds(input([watcher([reference[1]!, reference[2]!, reference[0]!, reference[3]!])]))).toContain('unordered');
  });
  it('flags a revision split across responses', () => {
    const split = reference.map((e, i) => ({ ...e, resp: i }));
    expect(kinds(input([watcher(split)]))).toContain('split-revision');
  });
  it('flags an event after a progress notification that claimed its revision', () => {
    expect(kinds(input([watcher(reference, { progress: [{ stream: 0, rev: 4, time: 0, resp: 1 }] })]))).toContain('bookmark');
  });
  it('flags a wrong prev_kv, a lost acknowledged write and a phantom value in the reference', () => {
    const badPrev = reference.map((e, i) => (i === 1 ? { ...e, prev: null } : e));
    expect(kinds(input([watcher(badPrev)], { reference: badPrev }))).toContain('prev-kv');
    const lost = [reference[0]!, reference[3]!];
    expect(kinds(input([watcher(lost)], { reference: lost }))).toEqual(expect.arrayContaining(['lost-write']));
    const phantom = [...reference, ev(5, 'c', 'zzz', null, 3)];
    expect(kinds(input([watcher(phantom)], { reference: phantom }))).toContain('phantom');
  });
  it('flags a final read that disagrees with the replayed events', () => {
    expect(kinds(input([watcher(reference)], { finalKvs: [] }))).toEqual(['final-state']);
  });
  it('is unknown when no reference sequence could be read', () => {
    expect(checkWatch(input([watcher(reference)], { reference: undefined })).valid).toBe('unknown');
  });
});
