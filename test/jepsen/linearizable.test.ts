// The linearizability checker on known histories (the classic counterexamples and their valid
// neighbours), on histories generated from sequential runs (always accepted), and on mutated ones
// (always flagged).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkLinearizable, type LinOp } from '../../jepsen-lite/src/checkers/linearizable.js';
import { registerModel, type RegInput, type RegOutput } from '../../jepsen-lite/src/checkers/register-model.js';
import { registerAdmissible } from '../../jepsen-lite/src/checkers/register-checker.js';
import { minimizeWitness } from '../../jepsen-lite/src/checkers/witness.js';

type Op = LinOp<RegInput, RegOutput>;
let nextId = 0;
const w = (value: number, call: number, ret: number): Op => ({ id: nextId++, input: { f: 'write', value }, output: true, call, ret });
const wInfo = (value: number, call: number): Op => ({ id: nextId++, input: { f: 'write', value }, output: undefined, call, ret: Infinity });
const r = (out: number | null, call: number, ret: number): Op => ({ id: nextId++, input: { f: 'read' }, output: out, call, ret });
const cas = (from: number, to: number, ok: boolean, call: number, ret: number): Op => ({ id: nextId++, input: { f: 'cas', from, to }, output: ok, call, ret });
const check = (ops: Op[]): boolean | 'unknown' => checkLinearizable(registerModel, ops).valid;

describe('known histories', () => {
  it('accepts a read concurrent with a write returning either the old or the new value', () => {
    expect(check([w(1, 0, 1), w(2, 2, 10), r(1, 3, 4)])).toBe(true);
    expect(check([w(1, 0, 1), w(2, 2, 10), r(2, 3, 4)])).toBe(true);
  });

  it('flags a stale read after a completed write', () => {
    expect(check([w(1, 0, 1), w(2, 2, 3), r(1, 4, 5)])).toBe(false);
  });

  it('flags a lost write (the key reads as absent after an acknowledged write)', () => {
    expect(check([w(1, 0, 1), r(null, 2, 3)])).toBe(false);
    expect(check([r(null, 0, 1), w(1, 2, 3)])).toBe(true);
  });

  it('flags a read that goes backwards while a write is in flight', () => {
    expect(check([w(1, 0, 1), w(2, 2, 20), r(2, 3, 4), r(1, 5, 6)])).toBe(false);
    expect(check([w(1, 0, 1), w(2, 2, 20), r(1, 3, 4), r(2, 5, 6)])).toBe(true);
  });

  it('flags concurrent writes observed in two impossible orders', () => {
    const writes = [w(1, 0, 10), w(2, 0, 10)];
    expect(check([...writes, r(1, 11, 12), r(2, 13, 14), r(2, 11, 12), r(1, 13, 14)])).toBe(false);
    expect(check([...writes, r(1, 11, 12), r(2, 13, 14), r(1, 11, 12), r(2, 13, 14)])).toBe(false);
    expect(check([...writes, r(2, 11, 12), r(2, 13, 14), r(2, 11, 12), r(2, 13, 14)])).toBe(true);
  });

  it('treats an unknown write as possibly applied, at any time after its call, but never undone', () => {
    expect(check([w(1, 0, 1), wInfo(2, 2), r(2, 10, 11)])).toBe(true);
    expect(check([w(1, 0, 1), wInfo(2, 2), r(1, 10, 11)])).toBe(true);
    expect(check([w(1, 0, 1), wInfo(2, 2), r(2, 10, 11), r(1, 12, 13)])).toBe(false);
    expect(check([wInfo(2, 5), r(2, 0, 1)])).toBe(false); // not before its own invocation
  });

  it('checks compare-and-set results both ways', () => {
    expect(check([w(1, 0, 1), cas(1, 2, true, 2, 3), r(2, 4, 5)])).toBe(true);
    expect(check([w(1, 0, 1), cas(1, 2, false, 2, 3)])).toBe(false); // it held 1: the cas must succeed
    expect(check([w(1, 0, 1), cas(3, 2, true, 2, 3)])).toBe(false);
    expect(check([w(1, 0, 1), cas(3, 2, false, 2, 3), r(1, 4, 5)])).toBe(true);
  });

  it('answers unknown when the search budget runs out', () => {
    const ops: Op[] = [];
    for (let i = 0; i < 40; i++) ops.push(wInfo(i + 1, 0));
    ops.push(r(999, 1, 2));
    const res = checkLinearizable(registerModel, ops, { maxSteps: 1000 });
    expect(res.valid).toBe('unknown');
  });

  it('minimizes a stale read to the write, the overwrite and the read', () => {
    const ops = [w(1, 0, 1), r(1, 1.5, 1.8), w(2, 2, 3), r(2, 3.5, 3.7), w(3, 4, 5), r(2, 6, 7), r(3, 8, 9)];
    expect(check(ops)).toBe(false);
    const min = minimizeWitness(registerModel, ops, 2000, registerAdmissible(ops));
    expect(min.map((o) => o.input.f)).toEqual(['write', 'write', 'read']);
    expect(min.map((o) => (o.input.f === 'write' ? o.input.value : o.output))).toEqual([2, 3, 2]);
  });
});

/** A sequential run: each op takes effect at its own instant t = 10·i, inside a random interval. */
function sequentialRun(spec: { f: number; spread: [number, number]; info: boolean; applied: boolean }[], overlap: number): Op[] {
  let state: number | null = null;
  let value = 1;
  const ops: Op[] = [];
  spec.forEach((s, i) => {
    const t = 10 * i;
    const call = t - s.spread[0] * overlap;
    const ret = t + s.spread[1] * overlap;
    const id = nextId++;
    if (s.f === 0) ops.push({ id, input: { f: 'read' }, output: state, call, ret });
    else if (s.f === 1) {
      const v = value++;
      if (s.info) {
        ops.push({ id, input: { f: 'write', value: v }, output: undefined, call, ret: Infinity });
        if (s.applied) state = v;
      } else {
        ops.push({ id, input: { f: 'write', value: v }, output: true, call, ret });
        state = v;
      }
    } else {
      const from = state ?? 0;
      const to = value++;
      const fromGuess = s.applied ? from : from + 1000;
      const ok = state === fromGuess;
      ops.push({ id, input: { f: 'cas', from: fromGuess, to }, output: ok, call, ret });
      if (ok) state = to;
    }
  });
  return ops;
}

const opSpec = fc.record({
  f: fc.integer({ min: 0, max: 2 }),
  spread: fc.tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 30 })),
  info: fc.boolean(),
  applied: fc.boolean(),
});

describe('generated histories', () => {
  it('accepts every history generated from a sequential run, whatever the overlap', () => {
    fc.assert(
      fc.property(fc.array(opSpec, { minLength: 1, maxLength: 60 }), (spec) => {
        const ops = sequentialRun(spec.map((s) => ({ ...s, info: s.info && s.f === 1 && s.spread[0] % 3 === 0 })), 1);
        expect(checkLinearizable(registerModel, ops).valid).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('flags a history whose one read is changed to any other value', () => {
    fc.assert(
      fc.property(fc.array(opSpec, { minLength: 2, maxLength: 60 }), fc.nat(), fc.integer({ min: -3, max: 3 }), (spec, pick, delta) => {
        // Non-overlapping intervals fix the order, so with unique values any other result is impossible.
        const ops = sequentialRun(spec.map((s) => ({ ...s, info: false })), 0.1);
        const reads = ops.filter((o) => o.input.f === 'read');
        fc.pre(reads.length > 0 && delta !== 0);
        const victim = reads[pick % reads.length]!;
        const was = victim.output as number | null;
        victim.output = was === null ? 1 + Math.abs(delta) * 1000 : was + delta === 0 ? null : was + delta;
        expect(checkLinearizable(registerModel, ops).valid).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});
