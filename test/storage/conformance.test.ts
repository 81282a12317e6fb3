// MemoryStorage is the reference; DurableRaftStorage must be indistinguishable from it through Storage,
// before and after a restart.
import { afterAll } from 'vitest';
import { MemoryStorage } from '../../src/raft/storage.js';
import { DurableRaftStorage } from '../../src/storage/raft-storage.js';
import { TempDirs } from './helpers/temp-dirs.js';
import type { StorageSubject } from './helpers/storage-conformance.js';
import { storageConformance } from './helpers/storage-conformance.js';

function memorySubject(m: MemoryStorage): StorageSubject {
  return {
    storage: m,
    append: async (es) => m.append(es),
    setHardState: async (hs) => m.setHardState(hs),
    applySnapshot: async (snap) => m.applySnapshot(snap),
    createSnapshot: async (i, cs, data) => m.createSnapshot(i, cs, data),
    compact: async (i) => m.compact(i),
    setConfState: async (cs) => m.setConfState(cs),
  };
}

/** The durable store's writes go through save(), as a Ready loop uses it. */
function durableSubject(d: DurableRaftStorage): StorageSubject {
  return {
    storage: d,
    append: (entries) => d.save({ entries, mustSync: true }),
    setHardState: (hardState) => d.save({ entries: [], hardState, mustSync: true }),
    applySnapshot: (snap) => d.applySnapshot(snap),
    createSnapshot: (i, cs, data) => d.createSnapshot(i, cs, data),
    compact: (i) => d.compact(i),
    setConfState: (cs) => d.setConfState(cs),
  };
}

storageConformance({
  name: 'MemoryStorage',
  create: async () => memorySubject(new MemoryStorage()),
  restart: async (s) => s,
  dispose: async () => undefined,
});

const dirs = new TempDirs();
afterAll(() => dirs.removeAll());

storageConformance({
  name: 'DurableRaftStorage',
  create: async () => durableSubject(await DurableRaftStorage.open(await dirs.make())),
  restart: async (s) => {
    const d = s.storage as DurableRaftStorage;
    await d.close();
    return durableSubject(await DurableRaftStorage.open(d.dir));
  },
  dispose: async (s) => (s.storage as DurableRaftStorage).close(),
});
