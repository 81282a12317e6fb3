// Runs a short command for a container (an exec probe, a preStop hook) in its own process group, with
// the container's environment and directory, and a deadline after which the whole group is killed. The
// output is kept up to a bound, for the probe's failure message.
import { spawn } from 'node:child_process';
import { killGroup } from './proc-stat.js';

const OUTPUT_LIMIT = 10 * 1024;

export interface ExecResult {
  /** null when it could not start or was killed at the deadline. */
  readonly exitCode: number | null;
  readonly output: string;
  readonly timedOut: boolean;
  readonly error?: string;
}

export function execCommand(argv: readonly string[], env: Record<string, string>, cwd: string, timeoutMs: number): Promise<ExecResult> {
  return new Promise((resolve) => {
    const [file, ...args] = argv;
    if (file === undefined) {
      resolve({ exitCode: null, output: '', timedOut: false, error: 'no command specified' });
      return;
    }
    let output = '';
    const keep = (d: Buffer): void => {
      if (output.length < OUTPUT_LIMIT) output += d.toString('utf8').slice(0, OUTPUT_LIMIT - output.length);
    };
    const child = spawn(file, args, { env, cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ exitCode: null, output, timedOut: false, error: err.message });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      // Whatever the command left behind in its group goes with it.
      if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
      resolve({ exitCode: timedOut ? null : code, output, timedOut });
    });
  });
}
