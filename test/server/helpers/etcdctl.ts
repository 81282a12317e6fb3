// Runs the real etcdctl 3.4 (ETCDCTL_API=3) as a child process, with optional stdin, and collects its
// output; long-running commands (watch) are started and stopped by the test.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';

export interface CtlResult {
  readonly code: number | null;
  readonly stdout: string;
  /** stdout as bytes (-w protobuf prints binary). */
  readonly stdoutBytes: Buffer;
  readonly stderr: string;
}

export interface CtlOptions {
  readonly input?: string | Buffer;
  readonly timeoutMs?: number;
  /** Extra flags before the command (TLS files, --user, …). */
  readonly flags?: readonly string[];
}

/**
 * Generous timeouts (etcdctl's own are 2 s to dial and 5 s per command): the tests share the machine with
 * whatever else runs, and a slow answer is not what they are checking. Later flags override these.
 */
function ctlArgs(endpoint: string, args: readonly string[], flags: readonly string[] = []): string[] {
  return [`--endpoints=${endpoint}`, '--dial-timeout=10s', '--command-timeout=30s', ...flags, ...args];
}

const env = (): NodeJS.ProcessEnv => ({ ...process.env, ETCDCTL_API: '3' });

export function etcdctl(endpoint: string, args: readonly string[], opts: CtlOptions = {}): Promise<CtlResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('etcdctl', ctlArgs(endpoint, args, opts.flags), { env: env(), stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const stdoutBytes = Buffer.concat(out);
      resolve({ code, stdout: stdoutBytes.toString(), stdoutBytes, stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input ?? '');
  });
}

/** The "Error: …" lines etcdctl prints (its retry warnings carry timestamps and client ids, so they are dropped). */
export function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.startsWith('Error:') || l.startsWith('watch was canceled'));
}

/** A long-running etcdctl (watch, lease keep-alive) whose output the test reads as it comes. */
export class CtlProcess {
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;

  constructor(endpoint: string, args: readonly string[], flags: readonly string[] = []) {
    this.child = spawn('etcdctl', ctlArgs(endpoint, args, flags), { env: env(), stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout?.on('data', (d: Buffer) => (this.stdout += d.toString()));
    this.child.stderr?.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((resolve) => this.child.on('close', (code) => resolve(code)));
  }

  write(line: string): void {
    this.child.stdin?.write(line);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    await this.exited;
  }
}
