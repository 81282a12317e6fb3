// What /proc says about a process: whether it is alive and when it started (field 22 of /proc/<pid>/stat,
// in clock ticks since boot). A pid plus its start time names one process for good, so an adopted pid
// that the kernel has since given to somebody else is never signalled.
import { readFileSync } from 'node:fs';

export function processStartTime(pid: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may itself hold spaces or parentheses.
  const close = stat.lastIndexOf(')');
  const rest = stat.slice(close + 2).split(' ');
  // rest[0] is field 3 (state); the start time is field 22.
  if (rest[0] === 'Z' || rest[0] === 'X') return undefined; // a zombie is already dead
  return rest[19];
}

/** True when `pid` is still the process that started at `startTime`. */
export function isSameProcess(pid: number, startTime: string): boolean {
  return processStartTime(pid) === startTime;
}

/** Signals a process group; false when there is none (already gone). */
export function killGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}
