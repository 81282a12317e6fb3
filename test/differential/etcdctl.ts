// The real etcdctl 3.4 (ETCDCTL_API=3) as a child process: one-shot runs with optional stdin, and
// long-running ones (watch, lock, elect) whose output is read as it comes and that are stopped by signal.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { waitUntil } from './process-cluster.js';

export interface CtlResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

const env = (): NodeJS.ProcessEnv => ({ ...process.env, ETCDCTL_API: '3' });

export function etcdctl(args: readonly string[], input = '', timeoutMs = 30_000): Promise<CtlResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('etcdctl', args, { env: env(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? -1 : null), stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

/** A long-running etcdctl; `stop` ends it with SIGTERM (etcdctl unlocks or resigns on it) and returns its output. */
export class CtlProcess {
  stdout = '';
  stderr = '';
  private readonly child: ChildProcess;
  private readonly closed: Promise<number | null>;
  exited = false;

  constructor(args: readonly string[]) {
    this.child = spawn('etcdctl', args, { env: env(), stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout?.on('data', (d: Buffer) => (this.stdout += d.toString()));
    this.child.stderr?.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.child.stdin?.on('error', () => undefined);
    this.closed = new Promise((resolve) =>
      this.child.on('close', (code, signal) => {
        this.exited = true;
        resolve(code ?? (signal ? -1 : null));
      }),
    );
  }

  get lines(): number {
    return this.stdout.split('\n').length - 1;
  }

  write(line: string): void {
    this.child.stdin?.write(`${line}\n`);
  }

  /** Waits until stdout holds n complete lines, or the process has exited, or the timeout passes. */
  async waitLines(n: number, timeoutMs = 20_000): Promise<void> {
    await waitUntil(() => this.exited || this.lines >= n, `${n} lines of etcdctl output`, timeoutMs).catch(() => undefined);
  }

  async stop(): Promise<CtlResult> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    const force = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    const code = await this.closed;
    clearTimeout(force);
    return { code, stdout: this.stdout, stderr: this.stderr };
  }
}
