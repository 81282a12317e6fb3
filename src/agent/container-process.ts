// One run of a container: a process group whose leader is a small sh wrapper around the container's
// command. The wrapper exists for adoption: it waits for the command and writes its exit status to a file,
// so an agent that restarts (and is no longer the parent) still learns how the command ended. The wrapper
// traps TERM/INT/HUP only to outlive the command long enough to write the file; the command itself gets
// default signal handling (traps are reset at exec). Output goes through two FIFOs that the process holds
// open read-write, so a dead agent never breaks its pipe: writes wait in the FIFO (64 KiB) until the next
// agent reads on.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, closeSync, constants, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { Socket } from 'node:net';
import { delimiter, isAbsolute, join, resolve as resolvePath } from 'node:path';
import { promisify } from 'node:util';
import type { ChildProcess } from 'node:child_process';
import { LogWriter } from './log-writer.js';
import type { LogRotation } from './log-files.js';
import { logFile } from './log-files.js';
import { isSameProcess, killGroup, processStartTime } from './proc-stat.js';

// $0 is the exit file, $1 the container's cgroup ('' for none), the rest the command.
// The shell's own stderr goes to /dev/null (the command keeps the real one, as fd 3 until its exec), and
// the command runs in a subshell: a shell reports a job killed by a signal ("Killed") on that job's
// stderr, which would be a line in the container's log that the container never wrote.
const WRAPPER =
  'cg=$1; shift; if [ -n "$cg" ]; then echo $$ > "$cg/cgroup.procs" || exit 125; fi; ' +
  'trap : TERM INT HUP; exec 3>&2 2>/dev/null; ( exec "$@" 2>&3 3>&- ); rc=$?; echo $rc > "$0.tmp" && mv "$0.tmp" "$0"; exit $rc';
const ADOPTED_POLL_MS = 200;
const OUTPUT_DRAIN_MS = 1000;

/** What the state file keeps about a running container, enough for another agent to adopt it. */
export interface ContainerRecord {
  readonly pid: number;
  readonly startTime: string;
  readonly startedAt: number;
  readonly restart: number;
  readonly containerID: string;
}

export interface ExitInfo {
  readonly exitCode: number;
  readonly signal?: number;
  readonly finishedAt: number;
  /** True when the exit status was lost (an adopted process whose wrapper was killed). */
  readonly unknown: boolean;
}

export interface StartOptions {
  readonly argv: readonly string[];
  readonly env: Record<string, string>;
  readonly cwd: string;
  readonly runDir: string;
  readonly logDirPod: string;
  readonly container: string;
  readonly restart: number;
  readonly rotation: LogRotation;
  /** The cgroup to run in (see cgroups.ts), if limits are enforced. */
  readonly cgroup?: string | undefined;
  readonly onSpawn?: ((child: ChildProcess) => void) | undefined;
}

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15 };

/** Finds the program as exec would, or explains why not in the runtime's words. */
export function lookPath(file: string, env: Record<string, string>, cwd: string): string | { error: string } {
  const executable = (p: string): boolean => {
    try {
      accessSync(p, constants.X_OK);
      return statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (file.includes('/')) {
    const p = isAbsolute(file) ? file : resolvePath(cwd, file);
    if (!existsSync(p)) return { error: `exec: "${file}": stat ${file}: no such file or directory` };
    if (!executable(p)) return { error: `exec: "${file}": permission denied` };
    return p;
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const p = join(dir, file);
    if (executable(p)) return p;
  }
  return { error: `exec: "${file}": executable file not found in $PATH` };
}

function fifo(path: string): void {
  if (existsSync(path)) return;
  execFileSync('mkfifo', ['-m', '0600', path]);
}

const execFileAsync = promisify(execFile);

export class ContainerProcess {
  readonly exited: Promise<ExitInfo>;
  private resolveExit!: (e: ExitInfo) => void;
  private done = false;
  private readonly writer: LogWriter;
  private readonly readers: Socket[] = [];
  private pollTimer: NodeJS.Timeout | undefined;
  private childExit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private streamsOpen = 0;

  private constructor(
    readonly record: ContainerRecord,
    private readonly exitFile: string,
    fifos: readonly [string, string],
    logPath: string,
    rotation: LogRotation,
  ) {
    this.exited = new Promise((r) => (this.resolveExit = r));
    this.writer = new LogWriter(logPath, rotation);
    for (const [i, path] of fifos.entries()) {
      const stream = i === 0 ? 'stdout' : 'stderr';
      let fd: number;
      try {
        fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
      } catch {
        continue;
      }
      const sock = new Socket({ fd, readable: true, writable: false });
      this.streamsOpen++;
      sock.on('data', (d: Buffer) => this.writer.write(stream, d));
      sock.on('error', () => undefined);
      sock.on('close', () => {
        this.streamsOpen--;
        this.maybeFinish();
      });
      this.readers.push(sock);
    }
  }

  static paths(runDir: string, container: string, restart: number): { exitFile: string; fifos: [string, string] } {
    return {
      exitFile: join(runDir, `${container}.${restart}.exit`),
      fifos: [join(runDir, `${container}.stdout`), join(runDir, `${container}.stderr`)],
    };
  }

  /**
   * Makes a container's run directory and output FIFOs ahead of start() without holding the event loop
   * (there is no mkfifo in Node: start() would run the command and wait for it, a fork per FIFO).
   */
  static async prepare(runDir: string, container: string): Promise<void> {
    mkdirSync(runDir, { recursive: true });
    const missing = ContainerProcess.paths(runDir, container, 0).fifos.filter((f) => !existsSync(f));
    if (missing.length > 0) await execFileAsync('mkfifo', ['-m', '0600', ...missing]);
  }

  /** Starts a run (prepare() first spares it making the FIFOs). Throws when the process cannot be spawned at all. */
  static start(o: StartOptions): ContainerProcess {
    mkdirSync(o.runDir, { recursive: true });
    const { exitFile, fifos } = ContainerProcess.paths(o.runDir, o.container, o.restart);
    rmSync(exitFile, { force: true });
    for (const f of fifos) fifo(f);
    // The child gets the FIFOs read-write (it never sees EPIPE); our read ends are opened non-blocking first.
    const wOut = openSync(fifos[0], constants.O_RDWR);
    const wErr = openSync(fifos[1], constants.O_RDWR);
    const child = spawn('/bin/sh', ['-c', WRAPPER, exitFile, o.cgroup ?? '', ...o.argv], {
      env: o.env,
      cwd: o.cwd,
      detached: true,
      stdio: ['ignore', wOut, wErr],
    });
    const pid = child.pid;
    if (pid === undefined) {
      closeSync(wOut);
      closeSync(wErr);
      throw new Error(`cannot start ${o.argv[0] ?? ''}`);
    }
    o.onSpawn?.(child);
    child.unref();
    const record: ContainerRecord = {
      pid,
      startTime: processStartTime(pid) ?? '',
      startedAt: Date.now(),
      restart: o.restart,
      containerID: `setpoint://${randomBytes(32).toString('hex')}`,
    };
    const cp = new ContainerProcess(record, exitFile, fifos, logFile(o.logDirPod, o.container, o.restart), o.rotation);
    closeSync(wOut);
    closeSync(wErr);
    child.on('exit', (code, signal) => {
      cp.childExit = { code, signal };
      cp.maybeFinish();
      // A descendant that keeps the FIFOs open must not hold the exit back for good.
      setTimeout(() => cp.finish(), OUTPUT_DRAIN_MS).unref();
    });
    child.on('error', () => undefined);
    return cp;
  }

  /** Takes over a run that an earlier agent started: still running, or already finished. */
  static adopt(record: ContainerRecord, runDir: string, logDirPod: string, container: string, rotation: LogRotation): ContainerProcess {
    const { exitFile, fifos } = ContainerProcess.paths(runDir, container, record.restart);
    const cp = new ContainerProcess(record, exitFile, fifos, logFile(logDirPod, container, record.restart), rotation);
    const check = (): void => {
      if (isSameProcess(record.pid, record.startTime)) return;
      cp.finish();
    };
    cp.pollTimer = setInterval(check, ADOPTED_POLL_MS);
    cp.pollTimer.unref();
    check();
    return cp;
  }

  get running(): boolean {
    return !this.done;
  }

  /** Signals the container's whole process group. */
  signal(sig: NodeJS.Signals): void {
    if (this.done) return;
    // Never signal a pid the kernel has handed to another process.
    if (!isSameProcess(this.record.pid, this.record.startTime)) return;
    killGroup(this.record.pid, sig);
  }

  /** Stops reading the output without touching the process (the agent is shutting down). */
  detach(): void {
    if (this.pollTimer) clearInterval(this.pollTimer);
    for (const r of this.readers) r.destroy();
    this.done = true;
    this.writer.close();
  }

  private maybeFinish(): void {
    if (this.childExit && this.streamsOpen <= 0) this.finish();
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    for (const r of this.readers) r.destroy();
    this.writer.close();
    this.resolveExit(this.exitInfo());
  }

  private exitInfo(): ExitInfo {
    const finishedAt = Date.now();
    let fromFile: number | undefined;
    try {
      const n = Number(readFileSync(this.exitFile, 'utf8').trim());
      if (Number.isInteger(n)) fromFile = n;
    } catch {
      // the wrapper did not get to write it
    }
    const ce = this.childExit;
    let exitCode: number;
    let signalName: NodeJS.Signals | null = null;
    if (fromFile !== undefined) exitCode = fromFile;
    else if (ce?.signal) {
      signalName = ce.signal;
      exitCode = 128 + (SIGNALS[ce.signal] ?? 0);
    } else if (ce && ce.code !== null) exitCode = ce.code;
    else return { exitCode: 137, finishedAt, unknown: true };
    // sh reports a command killed by signal N as 128+N.
    const sig = signalName ? SIGNALS[signalName] : exitCode > 128 && exitCode <= 128 + 64 ? exitCode - 128 : undefined;
    return sig !== undefined ? { exitCode, signal: sig, finishedAt, unknown: false } : { exitCode, finishedAt, unknown: false };
  }
}
