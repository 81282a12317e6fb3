// The bbolt writer on a tree deep enough for two branch levels and values spanning several pages, read
// back by bbolt itself: `etcdctl snapshot status` opens the file with bbolt and walks every bucket.
import { execFile } from 'node:child_process';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOLT_PAGE_SIZE, BoltWriter, fnv1a64 } from '../../src/kv/bolt-writer.js';
import { etcdRevBytes } from '../../src/kv/etcd-snapshot.js';

const run = promisify(execFile);

describe('bbolt writer', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'setpoint-bolt-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('hashes as FNV-1a 64', () => {
    expect(fnv1a64(Buffer.alloc(0))).toBe(0xcbf29ce484222325n);
    expect(fnv1a64(Buffer.from('a'))).toBe(0xaf63dc4c8601ec8cn);
  });

  it('writes a file bbolt opens and walks: 100k entries, big values, empty buckets', async () => {
    const path = join(dir, 'db');
    const fh = await open(path, 'w+');
    const n = 100_000;
    let size: number;
    try {
      const w = new BoltWriter(fh);
      function* revisions(): Generator<readonly [Buffer, Buffer]> {
        for (let i = 1; i <= n; i++) yield [etcdRevBytes(i, 0), Buffer.alloc(i % 1000 === 0 ? 3 * BOLT_PAGE_SIZE : i % 50, 0x61)];
      }
      await w.bucket('key', revisions());
      await w.bucket('meta', [[Buffer.from('consistent_index'), Buffer.alloc(8)]]);
      await w.bucket('empty', []);
      size = await w.finish();
    } finally {
      await fh.close();
    }
    expect(size % BOLT_PAGE_SIZE).toBe(0);
    const { stdout } = await run('etcdctl', ['snapshot', 'status', path, '-w', 'json'], { env: { ...process.env, ETCDCTL_API: '3' } });
    const status = JSON.parse(stdout) as { revision: number; totalKey: number; totalSize: number };
    expect(status).toMatchObject({ revision: n, totalKey: n + 1, totalSize: size });
  });
});
