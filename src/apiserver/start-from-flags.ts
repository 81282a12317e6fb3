// From `setpoint apiserver`'s flags to a running API server: certificates (given, or made and kept in
// --cert-dir), the client CA, the token file, the store check. `setpoint apiserver` calls it, and
// `setpoint server` can, with its own registry and store client.
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { ApiServerFlags } from './apiserver-flags.js';
import { startApiServer, type ApiServerDeps, type RunningApiServer } from './api-server.js';
import { loadTokenFile } from './authn/token-file.js';
import { etcdHealthCheck } from './etcd-health.js';
import { prepareCertDir } from './pki/cert-dir.js';
import { servingSans } from './pki/serving-sans.js';
import { ResourceRegistry } from './resource-registry.js';

export interface StartOptions {
  readonly log: Logger;
  /** Default: an empty registry (the shell with no kinds). */
  readonly registry?: ResourceRegistry;
  /** Default: etcd's /health on --etcd-servers. */
  readonly storeCheck?: () => Promise<void>;
  readonly deps?: Partial<Omit<ApiServerDeps, 'registry' | 'storeCheck' | 'log'>>;
}

export async function startFromFlags(flags: ApiServerFlags, opts: StartOptions): Promise<RunningApiServer> {
  const log = opts.log;
  let certPem: string;
  let keyPem: string;
  let clientCaPem: string | undefined;
  if (flags.tls) {
    [certPem, keyPem] = await Promise.all([readFile(flags.tls.certFile, 'utf8'), readFile(flags.tls.keyFile, 'utf8')]);
  } else {
    const dir = await prepareCertDir(flags.certDir, servingSans(flags));
    if (dir.createdCa) log.info({ certDir: flags.certDir }, 'made a cluster CA');
    if (dir.issuedServing) log.info({ certDir: flags.certDir }, 'issued a serving certificate');
    if (!dir.serving) throw new Error('no serving certificate was made');
    ({ certPem, keyPem } = dir.serving);
    clientCaPem = dir.ca.certPem;
  }
  if (flags.clientCaFile !== undefined) clientCaPem = await readFile(flags.clientCaFile, 'utf8');
  const tokens = flags.tokenAuthFile !== undefined ? loadTokenFile(flags.tokenAuthFile, (m) => log.warn(m)) : undefined;
  const storeCheck =
    opts.storeCheck ??
    etcdHealthCheck(
      flags.etcd.servers,
      { ...(flags.etcd.caFile ? { caFile: flags.etcd.caFile } : {}), ...(flags.etcd.certFile ? { certFile: flags.etcd.certFile } : {}), ...(flags.etcd.keyFile ? { keyFile: flags.etcd.keyFile } : {}) },
      flags.etcd.healthcheckTimeoutMs,
    );
  return startApiServer(
    {
      bindAddress: flags.bindAddress,
      securePort: flags.securePort,
      ...(flags.advertiseAddress !== undefined ? { advertiseAddress: flags.advertiseAddress } : {}),
      servingCertPem: certPem,
      servingKeyPem: keyPem,
      ...(clientCaPem !== undefined ? { clientCaPem } : {}),
      ...(tokens ? { tokens } : {}),
      anonymousAuth: flags.anonymousAuth,
      maxRequestsInflight: flags.maxRequestsInflight,
      maxMutatingRequestsInflight: flags.maxMutatingRequestsInflight,
      requestTimeoutMs: flags.requestTimeoutMs,
      minRequestTimeoutSeconds: flags.minRequestTimeoutSeconds,
      maxRequestBodyBytes: flags.maxRequestBodyBytes,
      http2MaxStreamsPerConnection: flags.http2MaxStreamsPerConnection,
      etcdHealthcheckTimeoutMs: flags.etcd.healthcheckTimeoutMs,
    },
    { ...opts.deps, registry: opts.registry ?? new ResourceRegistry(), storeCheck, log },
  );
}
