// A ranged delete is applied in slices (kv/sliced.ts) with the event loop turning in between. While it
// runs, reads see the revision before it and a flush writes nothing (Backend.hold); a copy of the data
// directory taken in the middle (what a crash would leave) reopens with every key live and the old
// consistent index; once done, it is one revision with every key's delete, prevKvs and events in key
// order, exactly as the same delete applied in one piece.
import { cpSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { KvStore } from '../../src/kv/kv-store.js';
import type { KvEvent } from '../../src/kv/types.js';
import { dec, enc, tempDir, withStore } from './helpers.js';

const N = 60_000;
const key = (i: number): string => `d/${String(i).padStart(6, '0')}`;

async function fill(s: KvStore): Promise<void> {
  for (let i = 0; i < N; i += 100) {
    await s.txn({ success: Array.from({ length: 100 }, (_, j) => ({ requestPut: { key: enc(key(i + j)), value: enc(`v${i + j}`) } })) }, i / 100 + 1);
  }
  await s.flush();
  // Settle LevelDB's own background work, so that copying its files below is a clean image.
  await s.defragment();
}

describe('a ranged delete in slices', () => {
  it('is invisible to reads and to the disk until it is whole, then matches the delete in one piece', async () => {
    await withStore(async (s, dir) => {
      await fill(s);
      const before = s.currentRev;
      const index = s.consistentIndex;
      const revs: { rev: number; events: readonly KvEvent[] }[] = [];
      s.onCommit((rev, events) => revs.push({ rev, events }));
      let done = false;
      const del = s.deleteRange({ key: enc('d/'), rangeEnd: enc('d0'), prevKv: true }, index + 1).finally(() => {
        done = true;
      });
      // After the first slice: the loop is ours again while the delete is under way. What is done here
      // synchronously happens in its middle by construction: copying the data directory (the crash image)
      // and starting two reads (a range fixes its revision when it is called).
      await new Promise((r) => setImmediate(r));
      expect(done, 'the delete still under way after one turn').toBe(false);
      const copy = await tempDir();
      expect(done, 'the delete still under way when the copy is taken').toBe(false);
      cpSync(dir, copy, { recursive: true });
      const count = s.range({ key: enc('d/'), rangeEnd: enc('d0'), countOnly: true });
      const last = s.range({ key: enc(key(N - 1)) });
      const r = await count;
      expect([r.count, r.header.revision]).toEqual([N, before]);
      expect(dec((await last).kvs[0]?.value)).toBe(`v${N - 1}`);
      const res = await del;
      expect(res.deleted).toBe(N);
      expect(res.prevKvs.map((kv) => dec(kv.key))).toEqual(Array.from({ length: N }, (_, i) => key(i)));
      expect(s.currentRev).toBe(before + 1);
      expect(revs).toHaveLength(1);
      expect(revs[0]?.events.map((e) => `${e.type} ${dec(e.kv.key)}`)).toEqual(Array.from({ length: N }, (_, i) => `DELETE ${key(i)}`));
      expect((await s.range({ key: enc('d/'), rangeEnd: enc('d0'), countOnly: true })).count).toBe(0);

      // The crash image: the store before the delete, not half of it.
      const crashed = await KvStore.open(copy);
      try {
        expect(crashed.consistentIndex).toBe(index);
        expect(crashed.currentRev).toBe(before);
        expect((await crashed.range({ key: enc('d/'), rangeEnd: enc('d0'), countOnly: true })).count).toBe(N);
      } finally {
        await crashed.close();
        await rm(copy, { recursive: true, force: true });
      }

      // And the store itself after a restart: the whole delete.
      await s.flush();
      await s.close();
      const again = await KvStore.open(dir);
      try {
        expect(again.consistentIndex).toBe(index + 1);
        expect((await again.range({ key: enc('d/'), rangeEnd: enc('d0'), countOnly: true })).count).toBe(0);
        expect(again.currentRev).toBe(before + 1);
      } finally {
        await again.close();
      }
    });
  }, 120_000);
});
