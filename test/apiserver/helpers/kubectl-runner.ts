// The kubectl on this machine, run as a user would run it: a kubeconfig of our own, a fresh HOME and cache
// dir per call (so no discovery cache carries over), no KUBECONFIG from the environment, and no terminal to
// prompt on. Failures come back as a result with kubectl's exit code and output, not as a throw.
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const KUBECTL = existsSync('/usr/bin/kubectl') ? '/usr/bin/kubectl' : 'kubectl';
const run = promisify(execFile);

export interface KubectlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs kubectl with `kubeconfig`, HOME and cache under `home`. */
export async function runKubectl(kubeconfig: string, home: string, args: readonly string[]): Promise<KubectlResult> {
  try {
    const p = run(KUBECTL, kubectlArgv(kubeconfig, home, args), { env: kubectlEnv(home), timeout: 60_000 });
    // With no credentials kubectl would prompt for a user name on a terminal: give it none.
    p.child.stdin?.end();
    const r = await p;
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof x.code === 'number' ? x.code : -1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  }
}

/** Starts a long-running kubectl (`get -w`); the caller kills it. */
export function spawnKubectl(kubeconfig: string, home: string, args: readonly string[]): ChildProcessWithoutNullStreams {
  return spawn(KUBECTL, kubectlArgv(kubeconfig, home, args), { env: kubectlEnv(home) });
}

function kubectlArgv(kubeconfig: string, home: string, args: readonly string[]): string[] {
  return ['--kubeconfig', kubeconfig, '--cache-dir', join(home, 'cache'), ...args];
}

function kubectlEnv(home: string): NodeJS.ProcessEnv {
  return { ...process.env, HOME: home, KUBECONFIG: '' };
}
