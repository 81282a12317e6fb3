// Writes one container restart's output in the CRI format, line by line, rotating by size. A line longer
// than the partial limit is cut into P entries (kubelet cuts at 16 KiB) so one endless line cannot make
// the agent buffer without bound.
import { closeSync, fstatSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { LogRotation } from './log-files.js';
import { criTime } from './log-files.js';

const PARTIAL_LIMIT = 16 * 1024;

export class LogWriter {
  private fd: number;
  private size: number;
  private readonly pending: Record<'stdout' | 'stderr', Buffer> = { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) };
  private closed = false;

  constructor(
    private readonly path: string,
    private readonly rotation: LogRotation,
    private readonly now: () => number = Date.now,
  ) {
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, 'a', 0o640);
    this.size = fstatSync(this.fd).size;
  }

  write(stream: 'stdout' | 'stderr', chunk: Buffer): void {
    if (this.closed) return;
    let buf = this.pending[stream].length > 0 ? Buffer.concat([this.pending[stream], chunk]) : chunk;
    for (;;) {
      const nl = buf.indexOf(0x0a);
      if (nl < 0) break;
      this.entry(stream, 'F', buf.subarray(0, nl));
      buf = buf.subarray(nl + 1);
    }
    while (buf.length >= PARTIAL_LIMIT) {
      this.entry(stream, 'P', buf.subarray(0, PARTIAL_LIMIT));
      buf = buf.subarray(PARTIAL_LIMIT);
    }
    this.pending[stream] = Buffer.from(buf);
  }

  /** Flushes an unterminated last line (as a full line, as the runtime does at exit) and closes. */
  close(): void {
    if (this.closed) return;
    for (const s of ['stdout', 'stderr'] as const) {
      if (this.pending[s].length > 0) this.entry(s, 'F', this.pending[s]);
      this.pending[s] = Buffer.alloc(0);
    }
    this.closed = true;
    closeSync(this.fd);
  }

  private entry(stream: string, tag: 'F' | 'P', text: Buffer): void {
    const line = Buffer.concat([Buffer.from(`${criTime(this.now())} ${stream} ${tag} `), text, Buffer.from('\n')]);
    if (this.size > 0 && this.size + line.length > this.rotation.maxBytes) this.rotate();
    writeSync(this.fd, line);
    this.size += line.length;
  }

  private rotate(): void {
    closeSync(this.fd);
    const keep = Math.max(1, this.rotation.keep);
    rmSync(`${this.path}.${keep - 1}`, { force: true });
    for (let i = keep - 2; i >= 1; i--) {
      try {
        renameSync(`${this.path}.${i}`, `${this.path}.${i + 1}`);
      } catch {
        // that generation does not exist yet
      }
    }
    if (keep > 1) renameSync(this.path, `${this.path}.1`);
    else rmSync(this.path, { force: true });
    this.fd = openSync(this.path, 'a', 0o640);
    this.size = 0;
  }
}
