// Reads a container's logs the way `kubectl logs` asks for them: the current or the previous restart,
// the last N lines (--tail), lines since a time (--since / --since-time), with timestamps or without,
// a byte limit, and follow, which keeps yielding as lines are written (across rotations) until the
// container's output is finished.
import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LogEntry } from './log-files.js';
import { logFile, logFilesOf, parseLogLine } from './log-files.js';

export interface LogReadOptions {
  readonly tailLines?: number;
  /** Only entries at or after this time (ms since the epoch). */
  readonly sinceMs?: number;
  readonly timestamps?: boolean;
  readonly limitBytes?: number;
  readonly follow?: boolean;
  /** For follow: true once nothing more will be written (the container restart has finished). */
  readonly finished?: () => boolean;
  /** For follow: stops the iteration. */
  readonly signal?: AbortSignal;
  /** For follow: how often to look for more (default 100 ms). */
  readonly pollMs?: number;
}

function render(e: LogEntry, timestamps: boolean): string {
  return `${timestamps ? `${e.time} ` : ''}${e.text}${e.partial ? '' : '\n'}`;
}

function entriesOf(text: string): LogEntry[] {
  const out: LogEntry[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const e = parseLogLine(line);
    if (e) out.push(e);
  }
  return out;
}

/** The restart's log as chunks of text. */
export async function* readContainerLog(podDir: string, container: string, restart: number, opts: LogReadOptions = {}): AsyncGenerator<string> {
  const timestamps = opts.timestamps ?? false;
  let budget = opts.limitBytes ?? Infinity;
  const emit = (s: string): string | undefined => {
    if (budget <= 0) return undefined;
    const b = Buffer.from(s);
    if (b.length > budget) {
      const cut = b.subarray(0, budget).toString();
      budget = 0;
      return cut;
    }
    budget -= b.length;
    return s;
  };
  let entries: LogEntry[] = [];
  for (const f of logFilesOf(podDir, container, restart)) entries.push(...entriesOf(readFileSync(f, 'utf8')));
  if (opts.sinceMs !== undefined) {
    const since = opts.sinceMs;
    entries = entries.filter((e) => e.timeMs >= since);
  }
  if (opts.tailLines !== undefined) {
    // A line is its P pieces plus the F that ends it: count lines by their F entries.
    let lines = 0;
    let i = entries.length;
    while (i > 0 && lines < opts.tailLines) {
      i--;
      if (!entries[i]?.partial) lines++;
      if (lines === opts.tailLines) {
        while (i > 0 && entries[i - 1]?.partial) i--;
      }
    }
    if (opts.tailLines <= 0) i = entries.length;
    entries = entries.slice(i);
  }
  if (entries.length > 0) {
    const out = emit(entries.map((e) => render(e, timestamps)).join(''));
    if (out === undefined) return;
    yield out;
    if (budget <= 0) return;
  }
  if (!opts.follow) return;

  // Follow the current file from its end; a rotation shows as a file that is shorter than our offset or a
  // different inode, and then we finish the old one by its new name (.1) and go on with the new one.
  const path = logFile(podDir, container, restart);
  let ino = -1;
  let offset = 0;
  try {
    const st = statSync(path);
    ino = st.ino;
    offset = st.size;
  } catch {
    // not written yet
  }
  let rest = '';
  const readFrom = (p: string, from: number): { text: string; size: number } => {
    const fd = openSync(p, 'r');
    try {
      const size = statSync(p).size;
      const len = Math.max(0, Math.min(size - from, 1 << 20));
      const buf = Buffer.alloc(len);
      const n = len > 0 ? readSync(fd, buf, 0, len, from) : 0;
      return { text: buf.subarray(0, n).toString('utf8'), size: from + n };
    } finally {
      closeSync(fd);
    }
  };
  for (;;) {
    if (opts.signal?.aborted) return;
    const done = opts.finished?.() ?? false;
    let chunk = '';
    try {
      const st = statSync(path);
      if (st.ino !== ino && ino !== -1) {
        try {
          chunk += readFrom(`${path}.1`, offset).text;
        } catch {
          // rotated away already
        }
        ino = st.ino;
        offset = 0;
      } else if (ino === -1) {
        ino = st.ino;
      }
      const r = readFrom(path, offset);
      chunk += r.text;
      offset = r.size;
    } catch {
      // no file yet
    }
    const text = rest + chunk;
    const lastNl = text.lastIndexOf('\n');
    rest = lastNl < 0 ? text : text.slice(lastNl + 1);
    const complete = lastNl < 0 ? '' : text.slice(0, lastNl + 1);
    let entries2 = entriesOf(complete);
    if (opts.sinceMs !== undefined) {
      const since = opts.sinceMs;
      entries2 = entries2.filter((e) => e.timeMs >= since);
    }
    if (entries2.length > 0) {
      const out = emit(entries2.map((e) => render(e, timestamps)).join(''));
      if (out === undefined) return;
      yield out;
      if (budget <= 0) return;
    }
    if (done && chunk === '') return;
    try {
      await sleep(opts.pollMs ?? 100, undefined, opts.signal ? { signal: opts.signal } : undefined);
    } catch {
      return; // aborted
    }
  }
}
