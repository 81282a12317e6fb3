// The write-ahead log's files: numbered segments, each zero-filled ahead of the writer so that a durable
// write only syncs data, never the file's size (etcd preallocates its WAL for the same reason). A write is
// one pwrite of already-framed records; a write that must be durable goes through a descriptor opened
// with O_DSYNC, so it is a single system call rather than a write and an fdatasync. When a segment is
// full the writer syncs it, starts the next one with a header that restates the whole durable state, and
// from then on older segments can be deleted as soon as compaction has passed every entry in them.
import { constants, promises as fsp } from 'node:fs';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { segmentFileName } from './records.js';

/** A segment is rotated once a write would take it past this size (a single larger write still fits). */
export const DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024;
/** Zero-filling runs this far ahead of the writer, in one write and one sync. */
const ALLOCATION_STEP = 4 * 1024 * 1024;
/** Records that need not be durable are held in memory up to this many bytes. */
const HOLD_LIMIT = 256 * 1024;

function pwrite(fd: number, buf: Uint8Array, position: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const from = (done: number): void =>
      fs.write(fd, buf, done, buf.length - done, position + done, (e, n) => {
        if (e) reject(e);
        else if (done + n < buf.length) from(done + n);
        else resolve();
      });
    from(0);
  });
}

/** Byte count of pieces written one after the other. */
function sizeOf(pieces: readonly Uint8Array[]): number {
  let n = 0;
  for (const p of pieces) n += p.length;
  return n;
}

/**
 * Writes pieces one after the other at `position` with positional writev (libuv splits at IOV_MAX and
 * continues after short writes); whatever an error leaves unwritten is written as one buffer.
 */
function pwritev(fd: number, pieces: readonly Uint8Array[], position: number): Promise<void> {
  if (pieces.length === 0) return Promise.resolve();
  if (pieces.length === 1) return pwrite(fd, pieces[0] as Uint8Array, position);
  const total = sizeOf(pieces);
  return new Promise((resolve, reject) =>
    fs.writev(fd, pieces as Uint8Array[], position, (e, n) => {
      if (e) reject(e);
      else if (n < total) pwrite(fd, Buffer.concat(pieces as Uint8Array[], total).subarray(n), position + n).then(resolve, reject);
      else resolve();
    }),
  );
}

function fdatasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fdatasync(fd, (e) => (e ? reject(e) : resolve())));
}

function close(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.close(fd, (e) => (e ? reject(e) : resolve())));
}

/** Makes a rename or unlink in `dir` durable. */
export async function syncDir(dir: string): Promise<void> {
  const dh = await fsp.open(dir, constants.O_RDONLY);
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}

/** Zeros to write from, made once: a fresh 4 MiB buffer per step made V8 collect young garbage early. */
let zeros: Buffer | undefined;

/** Writes zeros over [from, to) of an open file. */
async function zeroFill(fd: number, from: number, to: number): Promise<void> {
  zeros ??= Buffer.alloc(ALLOCATION_STEP);
  const chunk = zeros.subarray(0, Math.min(to - from, ALLOCATION_STEP));
  for (let at = from; at < to; at += chunk.length) await pwrite(fd, to - at < chunk.length ? chunk.subarray(0, to - at) : chunk, at);
}

const tmpName = (dir: string, seq: number): string => path.join(dir, `${segmentFileName(seq)}.tmp`);

/** Zero-fills segment `seq` to `size` bytes under its temporary name, synced: ready to be given a header. */
async function prepareSegment(dir: string, seq: number, size: number): Promise<void> {
  const fd = fs.openSync(tmpName(dir, seq), constants.O_CREAT | constants.O_TRUNC | constants.O_RDWR, 0o644);
  try {
    await zeroFill(fd, 0, size);
    await fdatasync(fd);
  } finally {
    await close(fd);
  }
}

/** Writes the header into a prepared segment and puts it in place under its real name. */
async function finishSegment(dir: string, seq: number, header: Buffer): Promise<void> {
  const tmp = tmpName(dir, seq);
  const fd = fs.openSync(tmp, constants.O_RDWR);
  try {
    await pwrite(fd, header, 0);
    await fdatasync(fd);
  } finally {
    await close(fd);
  }
  await fsp.rename(tmp, path.join(dir, segmentFileName(seq)));
  await syncDir(dir);
}

/** What the writer keeps about each segment: the highest entry index written to it (0: none that count). */
export interface SegmentInfo {
  readonly seq: number;
  maxIndex: number;
}

/** The segment the writer continues after opening: where its records end and how much of it is zero-filled. */
export interface Tail {
  readonly seq: number;
  readonly end: number;
  readonly size: number;
  /** The records ended in a torn write (a crash mid-write): everything from `end` on is zeroed before use. */
  readonly torn: boolean;
}

/**
 * The records that open segment `seq`: its header, then the whole state restated as it is before the
 * write that starts the segment (records held back but already acknowledged may be restated too: every
 * state record is idempotent).
 */
export type HeaderOf = (seq: number) => Buffer;

export class WalWriter {
  private fd: number;
  private dsyncFd: number;
  private pos: number;
  private allocated: number;
  /** Where the current segment's header ends: a segment is never rotated before it holds a record. */
  private headerEnd: number;
  /** A write since the last sync went without one: the next durable write must sync the whole file. */
  private unsynced = false;
  /** Records that need not be durable, held back to go out with the next write that must be. */
  private held: Uint8Array[] = [];
  private heldBytes = 0;
  private heldMaxIndex = 0;
  /** The background job planAhead() started last (settled when none is running). */
  private ahead: Promise<void> = Promise.resolve();
  private aheadBusy = false;
  /** The sequence number of the next segment, once it is prepared under its temporary name. */
  private prepared: number | undefined;

  private constructor(
    readonly dir: string,
    private readonly segmentBytes: number,
    readonly segments: SegmentInfo[],
    private readonly headerOf: HeaderOf,
    fds: { fd: number; dsyncFd: number },
    pos: number,
    allocated: number,
  ) {
    this.fd = fds.fd;
    this.dsyncFd = fds.dsyncFd;
    this.pos = pos;
    this.allocated = allocated;
    this.headerEnd = pos;
  }

  /** Creates segment `seq` holding only `header`, durably (written under a temporary name, then renamed). */
  static async createSegment(dir: string, seq: number, header: Buffer, segmentBytes: number): Promise<number> {
    const size = Math.max(header.length, Math.min(segmentBytes, ALLOCATION_STEP));
    await prepareSegment(dir, seq, size);
    await finishSegment(dir, seq, header);
    return size;
  }

  /** Continues the last segment after its records; a torn tail is zeroed (and synced) first. */
  static async resume(dir: string, segmentBytes: number, segments: SegmentInfo[], tail: Tail, headerOf: HeaderOf): Promise<WalWriter> {
    const fds = openSegment(dir, tail.seq);
    try {
      if (tail.torn) {
        await zeroFill(fds.fd, tail.end, tail.size);
        await fdatasync(fds.fd);
      }
    } catch (e) {
      fs.closeSync(fds.fd);
      fs.closeSync(fds.dsyncFd);
      throw e;
    }
    return new WalWriter(dir, segmentBytes, segments, headerOf, fds, tail.end, tail.size);
  }

  /**
   * Appends framed records. `sync`: durable when this resolves; otherwise they may be lost in a crash,
   * the process's included, until a later durable append or close() writes them.
   */
  async append(records: readonly Uint8Array[], sync: boolean, maxIndex: number): Promise<void> {
    const bytes = sizeOf(records);
    if (!sync && this.heldBytes + bytes <= HOLD_LIMIT) {
      // Like etcd's buffered WAL encoder: a write that need not be durable (a commit-only hard state) costs
      // no system call; it goes out with the next write that must be.
      for (const r of records) this.held.push(r);
      this.heldBytes += bytes;
      this.heldMaxIndex = Math.max(this.heldMaxIndex, maxIndex);
      return;
    }
    if (this.held.length > 0 && this.mustRotate(this.heldBytes + bytes)) {
      // Held records go to the segment they were made in: the next segment's header restates the state
      // with them in it, so they must be on disk (rotate() syncs) before that header is.
      const heldMax = this.heldMaxIndex;
      await this.write(this.takeHeld(), false, heldMax, false);
    }
    const max = Math.max(maxIndex, this.heldMaxIndex);
    const data = this.held.length === 0 ? records : [...this.takeHeld(), ...records];
    await this.write(data, sync, max, true);
  }

  /** The held records; the hold is empty afterwards. */
  private takeHeld(): Uint8Array[] {
    const data = this.held;
    this.held = [];
    this.heldBytes = this.heldMaxIndex = 0;
    return data;
  }

  private mustRotate(bytes: number): boolean {
    return this.pos > this.headerEnd && this.pos + bytes > this.segmentBytes;
  }

  private async write(records: readonly Uint8Array[], sync: boolean, maxIndex: number, mayRotate: boolean): Promise<void> {
    const bytes = sizeOf(records);
    if (mayRotate && this.mustRotate(bytes)) await this.rotate();
    const end = this.pos + bytes;
    if (end > this.allocated) await this.ahead;
    if (end > this.allocated) {
      const to = Math.max(end, this.allocated + Math.min(this.segmentBytes, ALLOCATION_STEP));
      await zeroFill(this.fd, this.allocated, to);
      await fdatasync(this.fd);
      this.allocated = to;
      this.unsynced = false;
    }
    if (!sync) {
      await pwritev(this.fd, records, this.pos);
      this.unsynced = true;
    } else if (this.unsynced) {
      // O_DSYNC makes only this write's range durable: earlier unsynced writes need a whole-file sync.
      await pwritev(this.fd, records, this.pos);
      await fdatasync(this.fd);
      this.unsynced = false;
    } else {
      await pwritev(this.dsyncFd, records, this.pos);
    }
    this.pos = end;
    const cur = this.segments[this.segments.length - 1] as SegmentInfo;
    if (maxIndex > cur.maxIndex) cur.maxIndex = maxIndex;
    this.planAhead();
  }

  /**
   * Starts the file work the writer will need next, in the background, one job at a time: zero-filling
   * the current segment further when the writer nears the end of what is filled, and preparing the next
   * segment once this one is half full (etcd's WAL keeps a file pipeline for the same reason). Without it
   * a write would now and then wait for megabytes of zeros and two syncs, and a leader waiting that long
   * sends no heartbeats. A job that fails is simply redone inline by the writer, which reports the error.
   */
  private planAhead(): void {
    if (this.aheadBusy || this.fd < 0) return;
    const step = Math.min(this.segmentBytes, ALLOCATION_STEP);
    const fd = this.fd;
    const from = this.allocated;
    let job: (() => Promise<void>) | undefined;
    if (from < this.segmentBytes && from - this.pos < step) {
      const to = Math.min(this.segmentBytes, from + step);
      job = async () => {
        await zeroFill(fd, from, to);
        await fdatasync(fd);
        if (this.fd === fd && this.allocated === from) this.allocated = to;
      };
    } else if (this.prepared === undefined && this.pos > this.segmentBytes / 2) {
      const seq = (this.segments[this.segments.length - 1] as SegmentInfo).seq + 1;
      job = async () => {
        await prepareSegment(this.dir, seq, this.segmentBytes);
        this.prepared = seq;
      };
    }
    if (!job) return;
    this.aheadBusy = true;
    this.ahead = job()
      .catch(() => undefined)
      .finally(() => {
        this.aheadBusy = false;
      });
  }

  /** The log was replaced (an installed snapshot): no entry in any segment so far is needed any more. */
  forgetEntries(): void {
    for (const s of this.segments) s.maxIndex = 0;
    this.heldMaxIndex = 0;
  }

  /**
   * Deletes the oldest segments while every entry in them is at or below `offset`. Only call once the
   * compaction to `offset` is durable. The last segment always stays: it is the one being written.
   */
  async dropCompacted(offset: number): Promise<void> {
    let dropped = false;
    while (this.segments.length > 1 && (this.segments[0] as SegmentInfo).maxIndex <= offset) {
      const s = this.segments.shift() as SegmentInfo;
      await fsp.rm(path.join(this.dir, segmentFileName(s.seq)), { force: true });
      dropped = true;
    }
    if (dropped) await syncDir(this.dir);
  }

  async close(): Promise<void> {
    if (this.fd < 0) return;
    // Held records first: writing them may rotate, which replaces the descriptors.
    if (this.held.length > 0) await this.append([], true, 0);
    const { fd, dsyncFd } = this;
    try {
      await this.ahead;
      if (this.prepared !== undefined) await fsp.rm(tmpName(this.dir, this.prepared), { force: true });
      await fdatasync(fd);
    } finally {
      this.fd = this.dsyncFd = -1;
      await close(fd);
      await close(dsyncFd);
    }
  }

  private async rotate(): Promise<void> {
    await this.ahead; // nothing of the old segment's may still be in flight when its descriptors close
    await fdatasync(this.fd); // the next segment's header is written as if everything before it is on disk
    const seq = (this.segments[this.segments.length - 1] as SegmentInfo).seq + 1;
    const header = this.headerOf(seq);
    let allocated: number;
    if (this.prepared === seq) {
      await finishSegment(this.dir, seq, header);
      allocated = this.segmentBytes;
    } else {
      allocated = await WalWriter.createSegment(this.dir, seq, header, this.segmentBytes);
    }
    this.prepared = undefined;
    const fds = openSegment(this.dir, seq);
    await close(this.fd);
    await close(this.dsyncFd);
    this.fd = fds.fd;
    this.dsyncFd = fds.dsyncFd;
    this.segments.push({ seq, maxIndex: 0 });
    this.pos = this.headerEnd = header.length;
    this.allocated = allocated;
    this.unsynced = false;
  }
}

function openSegment(dir: string, seq: number): { fd: number; dsyncFd: number } {
  const file = path.join(dir, segmentFileName(seq));
  const fd = fs.openSync(file, constants.O_RDWR);
  try {
    return { fd, dsyncFd: fs.openSync(file, constants.O_RDWR | constants.O_DSYNC) };
  } catch (e) {
    fs.closeSync(fd);
    throw e;
  }
}
