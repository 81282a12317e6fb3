// One `setpoint apiserver` process for tests and benchmarks, with what a client needs beside it: the
// cluster CA it made, an admin client certificate (system:masters) and a kubeconfig holding both, so
// kubectl, @kubernetes/client-node and Setpoint's own client and commands can all be pointed at it.
// stop() kills it (SIGKILL unless told otherwise); the directory is the caller's.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { readCertDirCa } from '../apiserver/pki/cert-dir.js';
import type { KeyPair } from '../apiserver/pki/certificates.js';
import { writeClientKubeconfig } from '../apiserver/pki/kubeconfig.js';
import type { RestClientConfig } from '../client/rest-client.js';
import { apiServerKind, type ApiServerSpec } from './kinds/apiserver.js';
import type { ManagedProcess } from './managed-process.js';
import { startProcess } from './process-kind.js';

export interface ApiServerProcessOptions extends Omit<ApiServerSpec, 'certDir'> {
  /** Logs, the cert dir and the kubeconfig go here. */
  readonly dir: string;
  /** For the log file's name (default `apiserver`). */
  readonly name?: string;
  /** A fixed port (to restart on the same one); free otherwise. */
  readonly port?: number;
  readonly timeoutMs?: number;
}

export interface ApiServerProcess {
  readonly process: ManagedProcess;
  readonly port: number;
  readonly url: string;
  readonly caPem: string;
  readonly admin: KeyPair;
  /** A kubeconfig for the admin user (`system:masters`). */
  readonly kubeconfig: string;
  /** Config for Setpoint's RestClient as the admin user. */
  readonly clientConfig: RestClientConfig;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export async function startApiServerProcess(o: ApiServerProcessOptions): Promise<ApiServerProcess> {
  const name = o.name ?? 'apiserver';
  const certDir = join(o.dir, `${name}-certs`);
  mkdirSync(certDir, { recursive: true });
  const { process: proc, ports } = await startProcess(
    apiServerKind,
    { ...o, certDir },
    { name, dir: o.dir, ...(o.port !== undefined ? { ports: { secure: o.port } } : {}), ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}) },
  );
  const ca = readCertDirCa(certDir);
  const caPem = ca.certPem;
  const url = `https://127.0.0.1:${ports.secure}`;
  const kubeconfig = join(o.dir, `${name}.kubeconfig`);
  const admin = await writeClientKubeconfig(kubeconfig, ca, { server: url, user: 'admin', groups: ['system:masters'] });
  return {
    process: proc,
    port: ports.secure,
    url,
    caPem,
    admin,
    kubeconfig,
    clientConfig: { server: url, tls: { ca: caPem, cert: admin.certPem, key: admin.keyPem } },
    async stop(signal: NodeJS.Signals = 'SIGKILL') {
      await proc.kill(signal);
    },
  };
}
