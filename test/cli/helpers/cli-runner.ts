// The `setpoint` CLI run as a user runs it: the built program (src/harness/setpoint-main.ts) as a process,
// an admin kubeconfig for a registry server, KUBECONFIG and HOME of the test's own, stdin given.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderKubeconfig } from '../../../src/apiserver/pki/kubeconfig.js';
import { runCommand, type RunResult } from '../../../src/harness/command.js';
import { setpointMain } from '../../../src/harness/setpoint-main.js';
import type { RegistryServer } from '../../apiserver/registry/registry-server.js';

export interface CliRunner {
  readonly kubeconfig: string;
  readonly dir: string;
  run(args: readonly string[], opts?: { input?: string; env?: Record<string, string> }): Promise<RunResult>;
  /** Runs and expects exit 0; returns stdout. */
  ok(...args: string[]): Promise<string>;
  file(name: string, text: string): string;
}

export function cliRunner(s: RegistryServer): CliRunner {
  const dir = join(s.ts.dir, 'cli');
  mkdirSync(join(dir, 'home'), { recursive: true });
  const kubeconfig = join(dir, 'admin.kubeconfig');
  writeFileSync(kubeconfig, renderKubeconfig({ server: s.ts.url, caPem: s.ts.ca.certPem, userName: 'admin', clientCertPem: s.ts.admin.certPem, clientKeyPem: s.ts.admin.keyPem }), { mode: 0o600 });
  const run = (args: readonly string[], opts: { input?: string; env?: Record<string, string> } = {}): Promise<RunResult> =>
    runCommand({ bin: process.execPath, args: [setpointMain(), ...args], env: { KUBECONFIG: kubeconfig, HOME: join(dir, 'home'), ...opts.env } }, { ...(opts.input !== undefined ? { input: opts.input } : {}), timeoutMs: 60_000 });
  return {
    kubeconfig,
    dir,
    run,
    async ok(...args) {
      const r = await run(args);
      if (r.code !== 0) throw new Error(`setpoint ${args.join(' ')} exited ${String(r.code)}: ${r.stderr}`);
      return r.stdout;
    },
    file(name, text) {
      const p = join(dir, name);
      writeFileSync(p, text);
      return p;
    },
  };
}
