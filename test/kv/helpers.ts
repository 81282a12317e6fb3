// Shared helpers for kv tests: a store on a fresh temp directory, removed afterwards, and byte helpers.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KvStore, type KvStoreOptions } from '../../src/kv/kv-store.js';

export const enc = (s: string): Uint8Array => Buffer.from(s, 'latin1');
export const dec = (b: Uint8Array | undefined): string => (b ? Buffer.from(b).toString('latin1') : '');

export async function tempDir(prefix = 'setpoint-kv-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** Opens a store on a temp dir; the returned cleanup closes it and removes the directory. */
export async function withStore<T>(f: (s: KvStore, dir: string) => Promise<T>, opts: KvStoreOptions = {}): Promise<T> {
  const dir = await tempDir();
  const s = await KvStore.open(dir, opts);
  try {
    return await f(s, dir);
  } finally {
    await s.close().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}
