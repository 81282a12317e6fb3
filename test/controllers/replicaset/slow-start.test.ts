import { describe, expect, it } from 'vitest';
import { slowStartBatch } from '../../../src/controllers/replicaset/slow-start.js';

describe('slowStartBatch', () => {
  it('sends batches of 1, 2, 4, … up to the count', async () => {
    const batches: number[] = [];
    let inBatch = 0;
    const r = await slowStartBatch(10, 1, async () => {
      inBatch++;
      await Promise.resolve();
      if (inBatch > 0) {
        batches.push(inBatch);
        inBatch = 0;
      }
    });
    expect(r).toEqual({ successes: 10, attempted: 10 });
    expect(batches).toEqual([1, 2, 4, 3]);
  });

  it('stops after the first batch with a failure and says how many were attempted', async () => {
    const calls: number[] = [];
    const r = await slowStartBatch(20, 1, async (i) => {
      calls.push(i);
      if (i === 4) throw new Error('denied');
    });
    // Batches 1 (0), 2 (1-2), 4 (3-6: 4 fails); 7..19 never attempted.
    expect(r.successes).toBe(6);
    expect(r.attempted).toBe(7);
    expect((r.error as Error).message).toBe('denied');
    expect(calls).toHaveLength(7);
  });

  it('does nothing for zero', async () => {
    expect(await slowStartBatch(0, 1, async () => undefined)).toEqual({ successes: 0, attempted: 0 });
  });
});
