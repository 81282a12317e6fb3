// The store's disk layer (src/kv/backend.ts): writes buffered in memory, records appended in key order
// beside the general buffer, must read the same as the database will once they are flushed — through
// point reads and range iteration, before a flush, while one is being written and after it — with later
// writes and deletes winning over earlier ones.
import fc from 'fast-check';
import { rm } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { Backend } from '../../src/kv/backend.js';
import { tempDir } from './helpers.js';

type Op =
  | { readonly kind: 'record'; readonly step: number; readonly value: number }
  | { readonly kind: 'put' | 'del'; readonly key: number; readonly value: number }
  | { readonly kind: 'flush' };

const key = (n: number): Buffer => Buffer.from(`r${String(n).padStart(4, '0')}`);

const op: fc.Arbitrary<Op> = fc.oneof(
  // A record's key is the last record's plus `step`: mostly growing, as revisions do, sometimes not.
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('record' as const), step: fc.integer({ min: -2, max: 3 }), value: fc.nat(1000) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('put' as const, 'del' as const), key: fc.integer({ min: 0, max: 120 }), value: fc.nat(1000) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'flush' as const }) },
);

async function contents(b: Backend): Promise<[string, string][]> {
  const out: [string, string][] = [];
  for await (const [k, v] of b.iterate(Buffer.from('r'), Buffer.from('s'))) out.push([k.toString(), v.toString()]);
  return out;
}

describe('Backend buffers', () => {
  it('reads as the model does before, during and after flushes, appended records included', async () => {
    const dir = await tempDir('setpoint-backend-');
    let n = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(op, { maxLength: 60 }), async (ops) => {
          const b = await Backend.open(`${dir}/db${n++}`);
          const model = new Map<number, string>();
          let last = 0;
          try {
            for (const o of ops) {
              if (o.kind === 'flush') {
                const f = b.flush();
                // While the batch is being written, it still reads the same.
                expect(await contents(b)).toEqual(expected(model));
                await f;
              } else if (o.kind === 'record') {
                const k = Math.max(0, last + o.step);
                last = k;
                b.putRecord(key(k), Buffer.from(`v${o.value}`));
                model.set(k, `v${o.value}`);
              } else if (o.kind === 'put') {
                b.put(key(o.key), Buffer.from(`p${o.value}`));
                model.set(o.key, `p${o.value}`);
              } else {
                b.del(key(o.key));
                model.delete(o.key);
              }
              expect(await contents(b)).toEqual(expected(model));
              for (const k of [0, 1, 2, 30, 59, 60, last]) expect((await b.read(key(k)))?.toString()).toBe(model.get(k));
            }
            await b.flush();
            expect(await contents(b)).toEqual(expected(model));
          } finally {
            await b.close();
          }
        }),
        { numRuns: 60 },
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

function expected(model: Map<number, string>): [string, string][] {
  return [...model].sort((a, b) => a[0] - b[0]).map(([k, v]) => [key(k).toString(), v]);
}
