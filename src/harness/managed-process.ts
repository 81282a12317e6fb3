// One long-running OS process the harness started: its command line, its output (appended to a log file,
// or read line by line, or both), signals (SIGKILL, SIGTERM, SIGSTOP/SIGCONT), waiting for readiness or for
// its exit, and starting it again with the same or a changed command. It is registered (children.ts), so
// it cannot outlive whoever started it.
import { spawn } from 'node:child_process';
import type { ChildProcess, StdioOptions } from 'node:child_process';
import { closeSync, createWriteStream, existsSync, mkdirSync, openSync, readFileSync, statSync } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { registerChild } from './children.js';
import { commandEnv } from './command.js';
import type { Command } from './command.js';
import { waitFor } from './wait.js';
import type { Probe } from './wait.js';

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface ProcessOutput {
  /** Both streams are appended here. Without onLine or capture the child writes the file itself. */
  readonly logFile?: string;
  /** Each line of either stream, as it comes (then the streams go through this process). */
  readonly onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
  /** Keep stdout and stderr in memory (stdout, stderr). */
  readonly capture?: boolean;
  /** Give the process a stdin to write to (write()). */
  readonly stdin?: boolean;
}

export type ExitListener = (exit: Exit, asked: boolean) => void;

export class ManagedProcess {
  /** The command the next start() runs: change it to restart with other flags. */
  command: Command;
  stdout = '';
  stderr = '';
  private child: ChildProcess | undefined;
  private exit: Promise<Exit> | undefined;
  private lastExit: Exit | undefined;
  private tee: WriteStream | undefined;
  private paused = false;
  /** Set when the harness itself sent a deadly signal: the exit that follows was asked for. */
  private asked = false;
  private readonly listeners: ExitListener[] = [];

  constructor(
    readonly name: string,
    command: Command,
    private readonly output: ProcessOutput = {},
  ) {
    this.command = command;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /** How the last run ended, once it has. */
  get exitStatus(): Exit | undefined {
    return this.lastExit;
  }

  /** Called at every exit, with whether the harness asked for it (kill/stop) or the process ended on its own. */
  onExit(l: ExitListener): void {
    this.listeners.push(l);
  }

  start(): void {
    if (this.child) throw new Error(`${this.name} is already running (pid ${String(this.child.pid)})`);
    const o = this.output;
    const piped = o.onLine !== undefined || o.capture === true;
    if (o.logFile) mkdirSync(dirname(o.logFile), { recursive: true });
    let fd: number | undefined;
    if (o.logFile && !piped) fd = openSync(o.logFile, 'a');
    const out = fd ?? (piped ? 'pipe' : 'ignore');
    const stdio: StdioOptions = [o.stdin ? 'pipe' : 'ignore', out, out];
    const c = this.command;
    let child: ChildProcess;
    try {
      child = spawn(c.bin, c.args, { env: commandEnv(c), stdio, ...(c.cwd ? { cwd: c.cwd } : {}) });
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
    registerChild(child);
    this.child = child;
    this.paused = false;
    this.asked = false;
    if (piped) {
      if (o.logFile) this.tee = createWriteStream(o.logFile, { flags: 'a' });
      this.read(child.stdout, 'stdout');
      this.read(child.stderr, 'stderr');
    }
    child.stdin?.on('error', () => undefined);
    this.exit = new Promise((resolve) => {
      let settled = false;
      const done = (exit: Exit): void => {
        if (settled) return;
        settled = true;
        if (this.child === child) this.child = undefined;
        this.lastExit = exit;
        this.tee?.end();
        this.tee = undefined;
        for (const l of this.listeners) l(exit, this.asked);
        resolve(exit);
      };
      // 'close' waits for the output pipes to drain, so every line is read before the exit is reported.
      child.once(piped ? 'close' : 'exit', (code: number | null, signal: NodeJS.Signals | null) => done({ code, signal }));
      child.once('error', (e) => {
        this.stderr += `${e.message}\n`;
        done({ code: null, signal: null });
      });
    });
  }

  private read(stream: Readable | null, which: 'stdout' | 'stderr'): void {
    if (!stream) return;
    const o = this.output;
    createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
      if (o.capture) this[which] += `${line}\n`;
      this.tee?.write(`${line}\n`);
      o.onLine?.(line, which);
    });
  }

  /** Sends a signal now; a deadly one to a paused process is followed by SIGCONT, so it can act on it. */
  signal(sig: NodeJS.Signals): void {
    const c = this.child;
    if (!c) throw new Error(`${this.name} is not running`);
    if (sig === 'SIGSTOP') this.paused = true;
    if (sig === 'SIGCONT') this.paused = false;
    if (sig === 'SIGKILL' || sig === 'SIGTERM' || sig === 'SIGINT') this.asked = true;
    c.kill(sig);
    if (this.paused && sig !== 'SIGSTOP') {
      c.kill('SIGCONT');
      this.paused = false;
    }
  }

  pause(): void {
    this.signal('SIGSTOP');
  }

  resume(): void {
    this.signal('SIGCONT');
  }

  /**
   * Sends the signal and waits for the exit. Anything gentler than SIGKILL gets `graceMs` (default 30 s)
   * before SIGKILL follows: a process that ignores SIGTERM shows as killed, not as a hung test.
   */
  async kill(sig: NodeJS.Signals = 'SIGKILL', graceMs = 30_000): Promise<Exit> {
    if (!this.child || !this.exit) return this.lastExit ?? { code: null, signal: null };
    const exit = this.exit;
    this.signal(sig);
    if (sig === 'SIGKILL') return exit;
    const force = setTimeout(() => this.child?.kill('SIGKILL'), graceMs);
    try {
      return await exit;
    } finally {
      clearTimeout(force);
    }
  }

  /** Waits for the process to exit on its own. */
  async exited(timeoutMs = 30_000): Promise<Exit> {
    const exit = this.exit;
    if (!exit) throw new Error(`${this.name} was never started`);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), timeoutMs)));
    try {
      const e = await Promise.race([exit, late]);
      if (!e) throw new Error(`${this.name} still runs after ${timeoutMs} ms`);
      return e;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Waits until `probe` holds, failing at once (with the end of its log) if the process exits first:
   * a member that cannot start says why instead of running out the clock.
   */
  async waitReady<T>(what: string, probe: Probe<T>, timeoutMs = 30_000): Promise<T> {
    const child = this.child;
    return waitFor(
      `${this.name}: ${what}`,
      async () => {
        if (!child || this.child !== child) {
          const e = this.lastExit;
          throw new Error(`${this.name} exited (${String(e?.code ?? e?.signal)}) before ${what}:\n${this.logTail(15)}`);
        }
        return probe();
      },
      { timeoutMs, intervalMs: 100, detail: () => `last lines of its log:\n${this.logTail(10)}` },
    );
  }

  write(text: string): void {
    const stdin = this.child?.stdin;
    if (!stdin) throw new Error(`${this.name} has no stdin to write to`);
    stdin.write(text);
  }

  // ---- its log ----

  /** How far the log goes now: pass it to logSince() to read only what comes after. */
  logMark(): number {
    const f = this.output.logFile;
    if (f) return existsSync(f) ? statSync(f).size : 0;
    return Buffer.byteLength(this.stdout + this.stderr);
  }

  logSince(mark = 0): string {
    const f = this.output.logFile;
    if (f) return existsSync(f) ? readFileSync(f).subarray(mark).toString() : '';
    return Buffer.from(this.stdout + this.stderr).subarray(mark).toString();
  }

  logTail(lines = 40): string {
    return this.logSince().trimEnd().split('\n').slice(-lines).join('\n');
  }

  /** The JSON log lines (pino's, or etcd's zap) whose message is `msg`, after `mark`, parsed. */
  logged<T extends { readonly msg?: string }>(msg: string, mark = 0): T[] {
    return this.logSince(mark)
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as T)
      .filter((l) => l.msg === msg);
  }
}
