// Backend.hold(): a write applied over several turns of the event loop must reach the disk whole. While a
// hold is active a flush waits, so nothing of the held writes (nor of anything buffered beside them) lands
// in a batch of its own; once released, one flush writes them all, and a reopened store sees them.
import { rm } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { Backend } from '../../src/kv/backend.js';
import { tempDir } from './helpers.js';

describe('Backend.hold', () => {
  it('keeps a flush waiting until release, then writes everything in one batch', async () => {
    const dir = await tempDir();
    try {
      let b = await Backend.open(dir);
      const release = b.hold();
      b.putRecord(Buffer.from('r0001'), Buffer.from('a'));
      let flushed = false;
      const f = b.flush().then(() => {
        flushed = true;
      });
      b.putRecord(Buffer.from('r0002'), Buffer.from('b'));
      // Let the event loop turn a few times: the flush must still be waiting.
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      expect(flushed).toBe(false);
      expect(() => b.hold()).toThrow(/hold is already active/);
      release();
      await f;
      expect(flushed).toBe(true);
      await b.close();
      b = await Backend.open(dir);
      expect((await b.read(Buffer.from('r0001')))?.toString()).toBe('a');
      expect((await b.read(Buffer.from('r0002')))?.toString()).toBe('b');
      await b.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
