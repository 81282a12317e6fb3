// The watch stream's outgoing queue (src/watch/response-queue.ts) against a plain model: a list of items
// with their owner and weight. Random pushes, merges, control responses, shifts and clears, with few
// owners and a small bound so refusals and a growing ring both happen often.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ResponseQueue } from '../../src/watch/response-queue.js';
import type { QueueOwner } from '../../src/watch/response-queue.js';

interface Owner extends QueueOwner {
  readonly name: number;
}

type Op =
  | { readonly kind: 'push'; readonly owner: number; readonly merge: boolean }
  | { readonly kind: 'control' }
  | { readonly kind: 'shift' }
  | { readonly kind: 'clear' };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 30, arbitrary: fc.record({ kind: fc.constant('push' as const), owner: fc.integer({ min: 0, max: 4 }), merge: fc.boolean() }) },
  { weight: 5, arbitrary: fc.constant({ kind: 'control' as const }) },
  { weight: 20, arbitrary: fc.constant({ kind: 'shift' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'clear' as const }) },
);

/** Values are lists of push numbers; a merge joins two lists unless the result would pass 3 entries. */
const merge = (a: number[], b: number[]): number[] | undefined => (a.length + b.length > 3 ? undefined : [...a, ...b]);

describe('ResponseQueue', () => {
  it('keeps order, bounds each owner, merges only into the owner\'s newest item, as the model does', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 400 }), (ops) => {
        const bound = 6;
        // A ring of 2 to start with, so that it grows with items wrapped around its end.
        const q = new ResponseQueue<Owner, number[]>(bound, 2);
        const owners: Owner[] = Array.from({ length: 5 }, (_, name) => ({ name, queued: 0, newest: -1 }));
        const model: { owner: number | undefined; value: number[]; weight: number }[] = [];
        let n = 0;
        for (const o of ops) {
          if (o.kind === 'push') {
            const value = [n++];
            const mine = model.filter((it) => it.owner === o.owner);
            const queued = mine.reduce((s, it) => s + it.weight, 0);
            const accepted = q.tryPush(owners[o.owner] as Owner, value, o.merge ? merge : undefined);
            expect(accepted).toBe(queued < bound);
            if (!accepted) continue;
            const newest = mine.at(-1);
            const merged = o.merge && newest ? merge(newest.value, value) : undefined;
            if (newest && merged) {
              newest.value = merged;
              newest.weight++;
            } else {
              model.push({ owner: o.owner, value, weight: 1 });
            }
          } else if (o.kind === 'control') {
            const value = [n++];
            q.push(value);
            model.push({ owner: undefined, value, weight: 1 });
          } else if (o.kind === 'shift') {
            const want = model.shift();
            const got = q.shift();
            expect(got).toEqual(want?.value);
            if (want) {
              expect(q.shiftedOwner?.name).toBe(want.owner);
              const before = want.owner === undefined ? 0 : model.filter((it) => it.owner === want.owner).reduce((s, it) => s + it.weight, 0) + want.weight;
              expect(q.shiftedWasFull).toBe(want.owner !== undefined && before >= bound);
            }
          } else {
            q.clear();
            model.length = 0;
          }
          expect(q.length).toBe(model.length);
          for (const ow of owners) {
            const mine = model.filter((it) => it.owner === ow.name);
            expect(ow.queued).toBe(mine.reduce((s, it) => s + it.weight, 0));
            expect(ow.newest >= 0).toBe(mine.length > 0);
          }
        }
        // What is left comes out in order.
        for (const want of model) expect(q.shift()).toEqual(want.value);
        expect(q.shift()).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });
});
