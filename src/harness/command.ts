// A command line the harness runs, and the one way it runs a command to completion (etcdctl, kubectl,
// openssl, …): output collected, stdin given, a deadline that kills it, and the child registered so it
// cannot outlive this process.
import { spawn } from 'node:child_process';
import { registerChild } from './children.js';

export interface Command {
  readonly bin: string;
  readonly args: readonly string[];
  /** Added to this process's environment. */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

export interface RunResult {
  /** The exit code; -1 when a signal ended it (the deadline's SIGKILL included). */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  /** stdout as bytes (some commands print binary, e.g. etcdctl -w protobuf). */
  readonly stdoutBytes: Buffer;
  readonly stderr: string;
  /** The deadline passed and the command was killed. */
  readonly timedOut: boolean;
}

export interface RunOptions {
  readonly input?: string | Buffer;
  /** Default 60 s. */
  readonly timeoutMs?: number;
}

export function commandEnv(c: Command): NodeJS.ProcessEnv {
  return { ...process.env, ...c.env };
}

/** Runs the command to its end. Rejects only when it cannot be started at all (no such program). */
export function runCommand(c: Command, opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(c.bin, c.args, { env: commandEnv(c), stdio: ['pipe', 'pipe', 'pipe'], ...(c.cwd ? { cwd: c.cwd } : {}) });
    registerChild(child);
    const out: Buffer[] = [];
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs ?? 60_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stdoutBytes = Buffer.concat(out);
      resolve({ code: code ?? (signal ? -1 : null), signal, stdout: stdoutBytes.toString(), stdoutBytes, stderr, timedOut });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input ?? '');
  });
}
