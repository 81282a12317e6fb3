// Every OS process the harness starts is registered here, so that an exit — normal, thrown, or
// SIGINT/SIGTERM — kills them all (SIGCONT first: a paused process would not die of SIGTERM).
import type { ChildProcess } from 'node:child_process';

const live = new Set<ChildProcess>();
let installed = false;

export function registerChild(c: ChildProcess): void {
  live.add(c);
  c.once('exit', () => live.delete(c));
  if (!installed) {
    installed = true;
    process.once('exit', killAllNow);
  }
}

export function killAllNow(): void {
  for (const c of live) {
    try {
      c.kill('SIGCONT');
      c.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  live.clear();
}
