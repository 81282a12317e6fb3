// Where a container's logs live and how they are named: <pod dir>/logs/<container>/<restart>.log is the
// file being written; rotation renames it to <restart>.log.1, the older ones to .2, … up to keep-1.
// Lines are in the CRI logging format kubelet reads: `<RFC 3339 nano time> <stream> <F|P> <text>`, P
// marking a partial line that the next entry continues.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export interface LogRotation {
  /** Rotate when the current file passes this size (kubelet: containerLogMaxSize 10Mi). */
  readonly maxBytes: number;
  /** Files kept per restart, the current one included (kubelet: containerLogMaxFiles 5). */
  readonly keep: number;
}

export const DEFAULT_LOG_ROTATION: LogRotation = { maxBytes: 10 * 1024 * 1024, keep: 5 };

export function containerLogDir(podDir: string, container: string): string {
  return join(podDir, 'logs', container);
}

export function logFile(podDir: string, container: string, restart: number): string {
  return join(containerLogDir(podDir, container), `${restart}.log`);
}

/** The files of one restart, oldest first. */
export function logFilesOf(podDir: string, container: string, restart: number): string[] {
  const dir = containerLogDir(podDir, container);
  if (!existsSync(dir)) return [];
  const base = `${restart}.log`;
  const rotated = readdirSync(dir)
    .filter((f) => f.startsWith(`${base}.`) && /^\d+$/.test(f.slice(base.length + 1)))
    .map((f) => Number(f.slice(base.length + 1)))
    .sort((a, b) => b - a)
    .map((n) => join(dir, `${base}.${n}`));
  const current = join(dir, base);
  return existsSync(current) ? [...rotated, current] : rotated;
}

/** RFC 3339 with nanoseconds (kubelet's format); JS has milliseconds, the rest is zeros. */
export function criTime(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2026-12-02T11:24:50.123Z
  return `${iso.slice(0, -1)}000000Z`;
}

export interface LogEntry {
  readonly time: string;
  readonly timeMs: number;
  readonly stream: 'stdout' | 'stderr';
  readonly partial: boolean;
  readonly text: string;
}

export function parseLogLine(line: string): LogEntry | undefined {
  const a = line.indexOf(' ');
  const b = line.indexOf(' ', a + 1);
  const c = line.indexOf(' ', b + 1);
  if (a < 0 || b < 0 || c < 0) return undefined;
  const time = line.slice(0, a);
  const stream = line.slice(a + 1, b);
  const tag = line.slice(b + 1, c);
  if (stream !== 'stdout' && stream !== 'stderr') return undefined;
  const timeMs = Date.parse(time);
  if (Number.isNaN(timeMs)) return undefined;
  return { time, timeMs, stream, partial: tag === 'P', text: line.slice(c + 1) };
}
