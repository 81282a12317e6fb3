// `setpoint apiserver` as a process kind: this checkout's build on a store's client URLs, serving HTTPS on
// 127.0.0.1 with the certificates it makes in its --cert-dir; ready when /readyz answers 200 (anonymous
// clients may read it) over TLS checked against the CA it made.
import { existsSync, readFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import type { Command } from '../command.js';
import type { ProcessKind } from '../process-kind.js';
import { setpointMain } from '../setpoint-main.js';

export interface ApiServerSpec {
  readonly etcdServers: readonly string[];
  readonly certDir: string;
  /** More `setpoint apiserver` flags (`--min-request-timeout=2`, …). */
  readonly flags?: readonly string[];
  readonly nodeArgs?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

export type ApiServerPort = 'secure';

export function readyz(port: number, caPem: string, timeoutMs = 2000): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = https.get({ host: '127.0.0.1', port, path: '/readyz', ca: caPem, agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
      res.on('error', () => resolve(undefined));
    });
    req.on('error', () => resolve(undefined));
    req.on('timeout', () => req.destroy());
  });
}

export const apiServerKind: ProcessKind<ApiServerSpec, ApiServerPort> = {
  name: 'setpoint apiserver',
  ports: ['secure'],
  command: (spec, ports): Command => ({
    bin: process.execPath,
    args: [
      ...(spec.nodeArgs ?? []),
      setpointMain(),
      'apiserver',
      `--etcd-servers=${spec.etcdServers.join(',')}`,
      `--secure-port=${ports.secure}`,
      '--bind-address=127.0.0.1',
      `--cert-dir=${spec.certDir}`,
      ...(spec.flags ?? []),
    ],
    env: { SETPOINT_LOG_FORMAT: 'json', ...spec.env },
  }),
  async ready(spec, ports) {
    const ca = join(spec.certDir, 'ca.crt');
    if (!existsSync(ca)) return false;
    return (await readyz(ports.secure, readFileSync(ca, 'utf8'))) === 200;
  },
};
