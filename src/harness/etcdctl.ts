// The real etcdctl 3.4 (ETCDCTL_API=3) as a child process: one-shot runs with optional stdin, and
// long-running ones (watch, lock, elect, lease keep-alive) whose output is read as it comes and that are
// stopped by signal. Both put the endpoints, the TLS files and generous timeouts before the command.
import { runCommand } from './command.js';
import type { Command, RunResult } from './command.js';
import { ManagedProcess } from './managed-process.js';
import type { TlsFiles } from './tls-files.js';
import { waitFor } from './wait.js';

export type CtlResult = RunResult;

export interface CtlOptions {
  readonly input?: string | Buffer;
  /** How long before the etcdctl process is killed (default 60 s). */
  readonly timeoutMs?: number;
  /** Flags before the command (after the harness's, so they win: --command-timeout=2s, --user, …). */
  readonly flags?: readonly string[];
  /** --cacert, --cert and --key from these files. */
  readonly tls?: TlsFiles;
  /**
   * --dial-timeout=10s --command-timeout=30s (default): etcdctl's own 2 s and 5 s are for an idle machine,
   * and a slow answer is not what tests check. false keeps etcdctl's defaults.
   */
  readonly generousTimeouts?: boolean;
}

/** Endpoints as etcdctl takes them; none (empty) when the arguments bring their own --endpoints. */
export type Endpoints = string | readonly string[];

function ctlCommand(endpoints: Endpoints, args: readonly string[], o: CtlOptions): Command {
  const eps = typeof endpoints === 'string' ? endpoints : endpoints.join(',');
  return {
    bin: process.env.ETCDCTL_BIN ?? 'etcdctl',
    args: [
      ...(eps !== '' ? [`--endpoints=${eps}`] : []),
      ...(o.generousTimeouts === false ? [] : ['--dial-timeout=10s', '--command-timeout=30s']),
      ...(o.tls ? [`--cacert=${o.tls.caFile}`, `--cert=${o.tls.certFile}`, `--key=${o.tls.keyFile}`] : []),
      ...(o.flags ?? []),
      ...args,
    ],
    env: { ETCDCTL_API: '3' },
  };
}

export function etcdctl(endpoints: Endpoints, args: readonly string[], opts: CtlOptions = {}): Promise<CtlResult> {
  return runCommand(ctlCommand(endpoints, args, opts), { ...(opts.input !== undefined ? { input: opts.input } : {}), ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}) });
}

/** The "Error: …" lines etcdctl prints (its retry warnings carry timestamps and client ids, so they are dropped). */
export function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.startsWith('Error:') || l.startsWith('watch was canceled'));
}

/** A long-running etcdctl; stop() ends it with SIGTERM (etcdctl unlocks or resigns on it) and returns its output. */
export class CtlProcess {
  private readonly proc: ManagedProcess;

  constructor(endpoints: Endpoints, args: readonly string[], opts: Omit<CtlOptions, 'input' | 'timeoutMs'> = {}) {
    this.proc = new ManagedProcess(`etcdctl ${args.join(' ')}`, ctlCommand(endpoints, args, opts), { capture: true, stdin: true });
    this.proc.start();
  }

  get stdout(): string {
    return this.proc.stdout;
  }

  get stderr(): string {
    return this.proc.stderr;
  }

  get exited(): boolean {
    return !this.proc.running;
  }

  /** Complete lines printed so far. */
  get lines(): number {
    return this.stdout.split('\n').length - 1;
  }

  write(text: string): void {
    this.proc.write(text);
  }

  /** Waits until stdout holds n complete lines or the process has exited; after the timeout, goes on regardless. */
  async waitLines(n: number, timeoutMs = 20_000): Promise<void> {
    await waitFor(`${n} lines of etcdctl output`, () => this.exited || this.lines >= n, { timeoutMs }).catch(() => undefined);
  }

  async stop(): Promise<CtlResult> {
    const exit = await this.proc.kill('SIGTERM', 5000);
    const stdoutBytes = Buffer.from(this.stdout);
    return { code: exit.code ?? (exit.signal ? -1 : null), signal: exit.signal, stdout: this.stdout, stdoutBytes, stderr: this.stderr, timedOut: false };
  }
}
