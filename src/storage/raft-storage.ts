// DurableRaftStorage: the core's Storage, kept in a write-ahead log of our own (wal.ts, records.ts). The core
// reads synchronously, so an in-memory mirror of the log (a MemoryStorage, as etcd keeps one in front of its
// WAL) answers reads; every write goes to the log first, as one write of framed records, and reaches the
// mirror only once that write is on disk. Snapshot data lives in a file of its own, written before the
// record that names it.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { ConfState, Entry, Snapshot } from '../raft/types.js';
import type { InitialState, MemoryStorage, Storage } from '../raft/storage.js';
import { RaftError, errSnapOutOfDate, invariant } from '../raft/errors.js';
import { StorageError, ioError } from './errors.js';
import { LOCK_FILE, inspectDataDir, lockDataDir, writeFileDurably, writeMarkerFile } from './data-dir.js';
import { loadRaftState } from './load.js';
import type { StoredSnapshot } from './records.js';
import {
  FORMAT_MAGIC,
  FORMAT_VERSION,
  compactCodec,
  confStateClearCodec,
  confStateCodec,
  formatCodec,
  hardStateCodec,
  snapshotCodec,
  snapshotFileName,
  snapshotIndexOf,
} from './records.js';
import type { LogShape, Plan, ReadyToSave, SnapshotFile } from './write-plan.js';
import { planCompact, planSave, storedSnapshot } from './write-plan.js';
import { DEFAULT_SEGMENT_BYTES, WalWriter } from './wal.js';

export interface DurableRaftStorageOptions {
  /** Log segments are rotated at about this size (default 64 MiB). Small values are for tests. */
  readonly segmentBytes?: number;
}

/**
 * A queued write. `plan` runs when the writer reaches it; jobs that read the mirror (they need terms, not
 * just the log's shape) only run first in a group, when the mirror reflects every earlier write.
 */
interface Job {
  readonly needsMirror: boolean;
  plan(shape: LogShape): Plan;
  /** Brings the mirror up to date once the write holding this job is on disk; `plan` is what was written. */
  applyToMirror(plan: Plan): void;
  resolve(): void;
  reject(e: unknown): void;
}

/** A job taken into a write, with what it planned. */
interface Planned {
  readonly job: Job;
  readonly plan: Plan;
}

/** Jobs planned into one write. */
interface Group {
  readonly planned: Planned[];
  readonly records: Uint8Array[];
  readonly shape: LogShape;
  readonly sync: boolean;
  /** Highest entry index written after the group's last reset. */
  readonly maxIndex: number;
  readonly reset: boolean;
  readonly snapshotFiles: SnapshotFile[];
}

export class DurableRaftStorage implements Storage {
  readonly dir: string;
  private readonly wal: WalWriter;
  private readonly mirror: MemoryStorage;
  private readonly release: () => Promise<void>;
  /** The latest snapshot as recorded (its data file's size and checksum); segment headers restate it. */
  private snap: StoredSnapshot | undefined;
  /** The configuration recorded at the applied index, if one is in force; segment headers restate it. */
  private confState: ConfState | undefined;
  private readonly queue: Job[] = [];
  private draining = false;
  /** Settles when the latest drain has emptied the queue. */
  private drained: Promise<void> = Promise.resolve();
  /** Set by a failed write or close(): later writes are refused with it, since disk and mirror may differ. */
  private stopped: Error | undefined;
  private closing: Promise<void> | undefined;
  /** Deletions of surplus segments and snapshot files still running (see tidy()). */
  private tidying: Promise<void> = Promise.resolve();

  private constructor(
    dir: string,
    wal: WalWriter,
    loaded: { mirror: MemoryStorage; snapshot: StoredSnapshot | undefined; confState: ConfState | undefined },
    release: () => Promise<void>,
  ) {
    this.dir = dir;
    this.wal = wal;
    this.mirror = loaded.mirror;
    this.snap = loaded.snapshot;
    this.confState = loaded.confState;
    this.release = release;
  }

  /**
   * Opens (creating if missing or empty) a raft data directory and loads it. Refuses, with a StorageError,
   * a directory that holds something else (STORAGE_FOREIGN_DIR), another format version (STORAGE_VERSION),
   * damaged or inconsistent records (STORAGE_CORRUPT), or one another process or handle has open
   * (STORAGE_LOCKED).
   */
  static async open(dir: string, opts: DurableRaftStorageOptions = {}): Promise<DurableRaftStorage> {
    const segmentBytes = opts.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
    invariant(Number.isSafeInteger(segmentBytes) && segmentBytes > 0, 'segmentBytes must be a positive integer');
    const state = await inspectDataDir(dir);
    try {
      if (state.kind === 'new') await fs.mkdir(dir, { recursive: true });
    } catch (e) {
      throw ioError(dir, 'creating the data directory', e);
    }
    const release = await lockDataDir(dir);
    try {
      let segments: readonly number[];
      let names: readonly string[] = [];
      if (state.kind === 'new') {
        // Whatever a creation cut short left: nothing in it was ever acknowledged.
        for (const name of state.leftovers) if (name !== LOCK_FILE) await fs.rm(path.join(dir, name), { force: true });
        await WalWriter.createSegment(dir, 1, formatCodec.frame({ magic: FORMAT_MAGIC, version: FORMAT_VERSION, seq: 1 }), segmentBytes);
        await writeMarkerFile(dir);
        segments = [1];
      } else {
        segments = state.segments;
        names = state.names;
      }
      const loaded = await loadRaftState(dir, segments);
      // Temporary files and snapshot data no record names are what an interrupted write left behind.
      for (const name of names) {
        const snapIndex = snapshotIndexOf(name);
        if (name.endsWith('.tmp') || (snapIndex !== undefined && snapIndex !== loaded.snapshot?.index)) await fs.rm(path.join(dir, name), { force: true });
      }
      // The writer asks the storage for segment headers; the storage needs the writer to exist first.
      const late: { storage?: DurableRaftStorage } = {};
      const wal = await WalWriter.resume(dir, segmentBytes, loaded.segments, loaded.tail, (seq) => (late.storage as DurableRaftStorage).segmentHeader(seq));
      late.storage = new DurableRaftStorage(dir, wal, loaded, release);
      return late.storage;
    } catch (e) {
      await release();
      if (e instanceof StorageError || e instanceof RaftError) throw e;
      throw ioError(dir, 'opening the raft log', e);
    }
  }

  // --- Storage: answered from the mirror, which holds exactly what is on disk ---

  initialState(): InitialState {
    return this.mirror.initialState();
  }

  entries(lo: number, hi: number, maxSize: number): Entry[] {
    return this.mirror.entries(lo, hi, maxSize);
  }

  term(i: number): number {
    return this.mirror.term(i);
  }

  firstIndex(): number {
    return this.mirror.firstIndex();
  }

  lastIndex(): number {
    return this.mirror.lastIndex();
  }

  snapshot(): Snapshot {
    return this.mirror.snapshot();
  }

  // --- writes ---

  /**
   * Persists one Ready — snapshot, entries (truncating a conflicting suffix), hard state — and optionally
   * the configuration at the applied index, as one atomic batch, fsync'd when the Ready says it must be.
   * Resolves once durable; saves issued before this one resolve first. Concurrent saves share one batch.
   */
  save(rd: ReadyToSave, confState?: ConfState): Promise<void> {
    return this.enqueue(false, (shape) => planSave(shape, rd, confState), (plan) => {
      if (rd.snapshot) {
        this.mirror.applySnapshot(rd.snapshot);
        this.snap = plan.snapshotFile?.stored;
        this.confState = undefined;
      }
      this.mirror.append(rd.entries);
      if (rd.hardState) this.mirror.setHardState(rd.hardState);
      if (confState) {
        this.mirror.setConfState(confState);
        this.confState = confState;
      }
    });
  }

  /** A follower installing a snapshot it received: the log is replaced by it. */
  applySnapshot(snap: Snapshot): Promise<void> {
    return this.save({ entries: [], snapshot: snap, mustSync: true });
  }

  /** Records the configuration in force at the applied index (see docs/raft-api.md on restarts). */
  setConfState(cs: ConfState): Promise<void> {
    return this.save({ entries: [], mustSync: true }, cs);
  }

  /**
   * Records a snapshot of the application state at applied index i, replacing the previous one. The log
   * is untouched until compact(). `cs` is the configuration at i (default: the previous snapshot's).
   */
  async createSnapshot(i: number, cs: ConfState | undefined, data: Uint8Array): Promise<Snapshot> {
    let made: Snapshot | undefined;
    await this.enqueue(
      true,
      (shape) => {
        if (i <= shape.snapIndex) throw errSnapOutOfDate();
        invariant(i <= shape.last, `snapshot ${i} is out of bound lastindex(${shape.last})`);
        const metadata = { index: i, term: this.mirror.term(i), confState: cs ?? this.mirror.snapshot().metadata.confState };
        const snapshotFile = { stored: storedSnapshot(metadata, data), data };
        const records = [snapshotCodec.frame(snapshotFile.stored)];
        return { records, shape: { ...shape, snapIndex: i }, sync: true, maxIndex: 0, reset: false, snapshotFile };
      },
      (plan) => {
        made = this.mirror.createSnapshot(i, cs, data);
        this.snap = plan.snapshotFile?.stored;
      },
    );
    invariant(made !== undefined, 'createSnapshot resolved without a snapshot');
    return made;
  }

  /** Discards entries up to and including `index`, which the latest snapshot must cover. */
  compact(index: number): Promise<void> {
    return this.enqueue(
      true,
      (shape) => planCompact(shape, index, (i) => this.mirror.term(i)),
      () => this.mirror.compact(index),
    );
  }

  /** Waits for queued writes, then closes the log and releases the directory. Writes after this are refused with STORAGE_CLOSED. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.stopped ??= new StorageError('STORAGE_CLOSED', `${this.dir}: raft storage is closed`);
      await this.idle();
      try {
        await this.wal.close();
      } finally {
        await this.release();
      }
    })();
    return this.closing;
  }

  /** Settles once every queued write and the deletions behind them are done. */
  async idle(): Promise<void> {
    while (this.draining) await this.drained;
    await this.tidying;
  }

  // --- the writer: one group of queued jobs per log write, strictly in order ---

  private enqueue(needsMirror: boolean, plan: Job['plan'], applyToMirror: Job['applyToMirror']): Promise<void> {
    if (this.stopped) return Promise.reject(this.stopped);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ needsMirror, plan, applyToMirror, resolve, reject });
      if (!this.draining) this.drained = this.drain();
    });
  }

  private shape(): LogShape {
    const m = this.mirror;
    return { offset: m.firstIndex() - 1, last: m.lastIndex(), snapIndex: m.snapshot().metadata.index, commit: m.getHardState().commit };
  }

  /** The records that open a new segment: its header, then the whole durable state restated (see HeaderOf). */
  private segmentHeader(seq: number): Buffer {
    const m = this.mirror;
    const offset = m.firstIndex() - 1;
    const records = [formatCodec.frame({ magic: FORMAT_MAGIC, version: FORMAT_VERSION, seq }), hardStateCodec.frame(m.getHardState())];
    if (this.snap) records.push(snapshotCodec.frame(this.snap));
    records.push(this.confState ? confStateCodec.frame(this.confState) : confStateClearCodec.frame({}));
    records.push(compactCodec.frame({ index: offset, term: m.term(offset) }));
    return Buffer.concat(records);
  }

  /** Takes every queued job that can share one write: the first, then any that plan from the shape alone. */
  private takeGroup(): Group {
    let shape = this.shape();
    const planned: Planned[] = [];
    const records: Uint8Array[] = [];
    const snapshotFiles: SnapshotFile[] = [];
    let sync = false;
    let reset = false;
    let maxIndex = 0;
    for (let job = this.queue[0]; job !== undefined; job = this.queue[0]) {
      if (job.needsMirror && planned.length > 0) break;
      this.queue.shift();
      let plan: Plan;
      try {
        plan = job.plan(shape);
      } catch (e) {
        job.reject(e); // refused before anything was written: the rest of the group goes ahead
        continue;
      }
      for (const r of plan.records) records.push(r);
      if (plan.snapshotFile) snapshotFiles.push(plan.snapshotFile);
      if (plan.reset) {
        reset = true;
        maxIndex = 0;
      }
      maxIndex = Math.max(maxIndex, plan.maxIndex);
      shape = plan.shape;
      sync ||= plan.sync;
      planned.push({ job, plan });
      if (job.needsMirror) break;
    }
    return { planned, records, shape, sync, maxIndex, reset, snapshotFiles };
  }

  private async drain(): Promise<void> {
    // Set and cleared synchronously around the loop, so a job enqueued at any moment is either seen by the
    // loop's next check or starts a new drain.
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        const g = this.takeGroup();
        if (g.planned.length === 0) continue;
        const before = { offset: this.mirror.firstIndex() - 1, snap: this.snap?.index };
        try {
          for (const f of g.snapshotFiles) await writeFileDurably(this.dir, snapshotFileName(f.stored.index), f.data);
          if (g.reset) this.wal.forgetEntries();
          await this.wal.append(g.records, g.sync, g.maxIndex);
          for (const { job, plan } of g.planned) job.applyToMirror(plan);
        } catch (e) {
          // Disk and mirror may now disagree (the log may hold part of it): refuse every later write.
          this.stopped = e instanceof RaftError || e instanceof StorageError ? e : ioError(this.dir, 'writing the log', e);
          for (const job of [...g.planned.map((p) => p.job), ...this.queue.splice(0)]) job.reject(this.stopped);
          return;
        }
        // Deleting what the write made surplus runs behind the writer: it must not hold up the next save.
        const tidied = this.tidy(before, g.shape.offset);
        this.tidying = this.tidying.then(() => tidied);
        for (const { job } of g.planned) job.resolve();
      }
    } finally {
      this.draining = false;
    }
  }

  /**
   * After a durable write that moved the log start or replaced the snapshot: deletes the segments and the
   * snapshot data nothing refers to any more. Failing to is not an error — the files are only surplus.
   */
  private async tidy(before: { offset: number; snap: number | undefined }, offset: number): Promise<void> {
    try {
      if (before.snap !== undefined && before.snap !== this.snap?.index) await fs.rm(path.join(this.dir, snapshotFileName(before.snap)), { force: true });
      if (offset !== before.offset) await this.wal.dropCompacted(offset);
    } catch {
      // left for the next open, which removes stray snapshot files; surplus segments are replayed harmlessly
    }
  }
}
