// The watcher group's key lookup against a brute-force scan, through random adds and removals that make
// the interval index rebuild, keep fresh entries, and carry emptied ones.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { KeyRange } from '../../src/kv/key-range.js';
import { inRange } from '../../src/kv/key-range.js';
import { IntervalIndex } from '../../src/watch/interval-index.js';
import { Watcher } from '../../src/watch/watcher.js';
import { WatcherGroup } from '../../src/watch/watcher-group.js';

const owner = { cancel: () => undefined, progress: () => false };
const sink = { offer: () => true };

function watcher(id: number, range: KeyRange): Watcher {
  return new Watcher(id, range, 1, [], false, false, false, sink, owner);
}

// Short keys over a small alphabet, so ranges overlap and share ends.
const arbKey = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'd'), maxLength: 3 });
const arbRange: fc.Arbitrary<KeyRange> = fc.oneof(
  arbKey.map((start) => ({ start, end: undefined })),
  fc.tuple(arbKey, arbKey).map(([a, b]) => (a < b ? { start: a, end: b } : { start: b, end: `${a}d` })),
  arbKey.map((start) => ({ start, end: '' })),
);

type Op = { add: KeyRange } | { remove: number } | { query: string };
const arbOp: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: arbRange.map((add) => ({ add })) },
  { weight: 3, arbitrary: fc.nat().map((remove) => ({ remove })) },
  { weight: 3, arbitrary: arbKey.map((query) => ({ query })) },
);

describe('WatcherGroup', () => {
  it('finds a watcher whose new range is the one that makes the index rebuild', () => {
    // The 17th distinct range added to an empty index rebuilds it before its watcher is in: it must not be lost.
    const g = new WatcherGroup();
    const ws = Array.from({ length: 40 }, (_, i) => watcher(i, { start: `/p${String(i).padStart(2, '0')}/`, end: `/p${String(i).padStart(2, '0')}0` }));
    for (const w of ws) g.add(w);
    ws.forEach((w, i) => {
      const found: Watcher[] = [];
      g.forKey(`/p${String(i).padStart(2, '0')}/k`, (x) => found.push(x));
      expect(found, `watcher ${i}`).toEqual([w]);
    });
  });

  it('finds exactly the watchers whose range holds a key', () => {
    fc.assert(
      fc.property(fc.array(arbOp, { maxLength: 400 }), (ops) => {
        const g = new WatcherGroup();
        const live: Watcher[] = [];
        let nextId = 0;
        for (const op of ops) {
          if ('add' in op) {
            const w = watcher(nextId++, op.add);
            g.add(w);
            live.push(w);
          } else if ('remove' in op) {
            if (live.length === 0) continue;
            const [w] = live.splice(op.remove % live.length, 1);
            expect(g.delete(w as Watcher)).toBe(true);
          } else {
            const found: number[] = [];
            g.forKey(op.query, (w) => found.push(w.id));
            const expected = live.filter((w) => inRange(w.range, op.query)).map((w) => w.id);
            expect(found.sort((a, b) => a - b)).toEqual(expected.sort((a, b) => a - b));
          }
          expect(g.size).toBe(live.length);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a thousand watchers on one prefix share one interval', () => {
    const idx = new IntervalIndex<number>();
    for (let i = 0; i < 1000; i++) idx.add('/registry/', '/registry0', i);
    for (let i = 0; i < 100; i++) idx.add(`/x/${i}`, `/x/${i}0`, 10_000 + i);
    const hits: number[] = [];
    idx.forEach('/registry/pods/a', (i) => hits.push(i));
    expect(hits).toHaveLength(1000);
    const one: number[] = [];
    idx.forEach('/x/42/y', (i) => one.push(i));
    expect(one).toEqual([10_042]);
    expect(idx.size).toBe(1100);
  });
});
