// Every OS process the harness starts is registered here, so none outlives whoever started it. Two nets:
// an exit hook kills what is left when this process exits (normally, on a throw, on process.exit), and a
// reaper — a small process of its own, reading a pipe from this one — kills them when this process dies
// in a way no hook sees (SIGKILL, an out-of-memory kill, a runner that kills its workers). The pipe closes
// however this process ends; the reaper then kills every registered child that is still the process it
// was (same pid and start time, so a reused pid is never hit) and exits.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';

const live = new Set<ChildProcess>();
let hooked = false;
let reaper: Writable | undefined;

// Lines on stdin: "+<pid>" registers, "-<pid>" forgets. At the end of input: SIGCONT (a paused process
// would not die of anything gentler) then SIGKILL to each one left.
const REAPER = `
const fs = require('node:fs');
const started = (pid) => { try { return fs.readFileSync('/proc/' + pid + '/stat', 'utf8').split(') ')[1].split(' ')[19]; } catch { return undefined; } };
const pids = new Map();
let buf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
  buf += d;
  let nl;
  while ((nl = buf.indexOf('\\n')) >= 0) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    const pid = Number(line.slice(1));
    if (line[0] === '+') pids.set(pid, started(pid));
    else pids.delete(pid);
  }
});
process.stdin.on('end', () => {
  for (const [pid, at] of pids) {
    if (at !== started(pid)) continue;
    try { process.kill(pid, 'SIGCONT'); process.kill(pid, 'SIGKILL'); } catch {}
  }
  process.exit(0);
});
`;

function tellReaper(line: string): void {
  if (!reaper) {
    const r = spawn(process.execPath, ['-e', REAPER], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
    r.unref();
    r.on('error', () => undefined);
    const stdin = r.stdin;
    stdin.on('error', () => undefined);
    // Neither the reaper nor its pipe may keep this process alive.
    (stdin as unknown as { unref?: () => void }).unref?.();
    reaper = stdin;
  }
  reaper.write(`${line}\n`);
}

/** Registers a child started elsewhere: it is killed if it is still running when this process goes. */
export function registerChild(c: ChildProcess): void {
  if (c.pid === undefined) return; // never started (spawn failed): nothing to kill
  live.add(c);
  const pid = c.pid;
  tellReaper(`+${pid}`);
  c.once('exit', () => {
    live.delete(c);
    tellReaper(`-${pid}`);
  });
  if (!hooked) {
    hooked = true;
    process.once('exit', killAllNow);
  }
}

/** Kills every registered child at once (SIGCONT first: a paused process would not die of SIGTERM). */
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

/** How many registered children still run (tests of the harness itself). */
export function liveChildren(): number {
  return live.size;
}
