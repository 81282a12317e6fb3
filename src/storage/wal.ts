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

export function pwrite(fd: number, buf: Buffer, position: number): Promise<void> {
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

/** Writes zeros over [from, to) of an open file. */
async function zeroFill(fd: number, from: number, to: number): Promise<void> {
  const chunk = Buffer.alloc(Math.min(to - from, ALLOCATION_STEP));
  for (let at = from; at < to; at += chunk.length) await pwrite(fd, to - at < chunk.length ? chunk.subarray(0, to - at) : chunk, at);
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
  private held: Buffer[] = [];
  private heldBytes = 0;
  private heldMaxIndex = 0;

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
    const file = path.join(dir, segmentFileName(seq));
    const tmp = `${file}.tmp`;
    const allocated = Math.max(header.length, Math.min(segmentBytes, ALLOCATION_STEP));
    const fd = fs.openSync(tmp, constants.O_CREAT | constants.O_TRUNC | constants.O_RDWR, 0o644);
    try {
      await zeroFill(fd, header.length, allocated);
      await pwrite(fd, header, 0);
      await fdatasync(fd);
    } finally {
      await close(fd);
    }
    await fsp.rename(tmp, file);
    await syncDir(dir);
    return allocated;
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
  async append(records: Buffer, sync: boolean, maxIndex: number): Promise<void> {
    if (!sync && this.heldBytes + records.length <= HOLD_LIMIT) {
      // Like etcd's buffered WAL encoder: a write that need not be durable (a commit-only hard state) costs
      // no system call; it goes out with the next write that must be.
      this.held.push(records);
      this.heldBytes += records.length;
      this.heldMaxIndex = Math.max(this.heldMaxIndex, maxIndex);
      return;
    }
    if (this.held.length > 0 && this.mustRotate(this.heldBytes + records.length)) {
      // Held records go to the segment they were made in: the next segment's header restates the state
      // with them in it, so they must be on disk (rotate() syncs) before that header is.
      const heldMax = this.heldMaxIndex;
      await this.write(this.takeHeld(), false, heldMax, false);
    }
    const max = Math.max(maxIndex, this.heldMaxIndex);
    const data = this.held.length === 0 ? records : Buffer.concat([this.takeHeld(), records]);
    await this.write(data, sync, max, true);
  }

  /** The held records as one buffer; the hold is empty afterwards. */
  private takeHeld(): Buffer {
    const data = Buffer.concat(this.held.splice(0));
    this.heldBytes = this.heldMaxIndex = 0;
    return data;
  }

  private mustRotate(bytes: number): boolean {
    return this.pos > this.headerEnd && this.pos + bytes > this.segmentBytes;
  }

  private async write(records: Buffer, sync: boolean, maxIndex: number, mayRotate: boolean): Promise<void> {
    if (mayRotate && this.mustRotate(records.length)) await this.rotate();
    const end = this.pos + records.length;
    if (end > this.allocated) {
      const to = Math.max(end, this.allocated + Math.min(this.segmentBytes, ALLOCATION_STEP));
      await zeroFill(this.fd, this.allocated, to);
      await fdatasync(this.fd);
      this.allocated = to;
      this.unsynced = false;
    }
    if (!sync) {
      await pwrite(this.fd, records, this.pos);
      this.unsynced = true;
    } else if (this.unsynced) {
      // O_DSYNC makes only this write's range durable: earlier unsynced writes need a whole-file sync.
      await pwrite(this.fd, records, this.pos);
      await fdatasync(this.fd);
      this.unsynced = false;
    } else {
      await pwrite(this.dsyncFd, records, this.pos);
    }
    this.pos = end;
    const cur = this.segments[this.segments.length - 1] as SegmentInfo;
    if (maxIndex > cur.maxIndex) cur.maxIndex = maxIndex;
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
    const { fd, dsyncFd } = this;
    if (fd < 0) return;
    try {
      if (this.held.length > 0) await this.append(Buffer.alloc(0), true, 0);
      await fdatasync(fd);
    } finally {
      this.fd = this.dsyncFd = -1;
      await close(fd);
      await close(dsyncFd);
    }
  }

  private async rotate(): Promise<void> {
    await fdatasync(this.fd); // the next segment's header is written as if everything before it is on disk
    const seq = (this.segments[this.segments.length - 1] as SegmentInfo).seq + 1;
    const header = this.headerOf(seq);
    const allocated = await WalWriter.createSegment(this.dir, seq, header, this.segmentBytes);
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
