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
import { issueClientCert, type KeyPair } from './pki/certificates.js';
import { servingSans } from './pki/serving-sans.js';
import { EtcdClient } from '../etcd-client/etcd-client.js';
import type { AdmissionChain } from './admission/interface.js';
import { KUBERNETES_GIT_VERSION } from './endpoints/version.js';
import { ApiRegistry } from './registry/api-registry.js';
import { ResourceRegistry } from './resource-registry.js';
import { Compactor } from './storage/etcd3/compactor.js';

export interface StartOptions {
  readonly log: Logger;
  /** Default: every kind (src/apiserver/registry) on the store --etcd-servers names. */
  readonly registry?: ResourceRegistry;
  /** The admission chain for the default registry (default: Kubernetes' default plugins and the webhooks). */
  readonly admission?: AdmissionChain;
  /** Default: etcd's /health on --etcd-servers. */
  readonly storeCheck?: () => Promise<void>;
  readonly deps?: Partial<Omit<ApiServerDeps, 'registry' | 'storeCheck' | 'log'>>;
}

export async function startFromFlags(flags: ApiServerFlags, opts: StartOptions): Promise<RunningApiServer> {
  const log = opts.log;
  let certPem: string;
  let keyPem: string;
  let clientCaPem: string | undefined;
  let kubeletClient: KeyPair | undefined;
  if (flags.tls) {
    [certPem, keyPem] = await Promise.all([readFile(flags.tls.certFile, 'utf8'), readFile(flags.tls.keyFile, 'utf8')]);
  } else {
    const dir = await prepareCertDir(flags.certDir, servingSans(flags));
    if (dir.createdCa) log.info({ certDir: flags.certDir }, 'made a cluster CA');
    if (dir.issuedServing) log.info({ certDir: flags.certDir }, 'issued a serving certificate');
    if (!dir.serving) throw new Error('no serving certificate was made');
    ({ certPem, keyPem } = dir.serving);
    clientCaPem = dir.ca.certPem;
    // pods/log's client certificate towards agents, fresh each start (agents trust the cluster CA).
    kubeletClient = await issueClientCert(dir.ca, { user: 'kube-apiserver-kubelet-client', groups: ['system:masters'] });
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
  let registry = opts.registry;
  let api: ApiRegistry | undefined;
  let client: EtcdClient | undefined;
  let compactor: Compactor | undefined;
  const deps = { ...opts.deps };
  if (registry === undefined) {
    const tls = {
      ...(flags.etcd.caFile ? { caFile: flags.etcd.caFile } : {}),
      ...(flags.etcd.certFile ? { certFile: flags.etcd.certFile } : {}),
      ...(flags.etcd.keyFile ? { keyFile: flags.etcd.keyFile } : {}),
    };
    client = new EtcdClient({ endpoints: flags.etcd.servers, ...(Object.keys(tls).length > 0 ? { tls } : {}), logger: log });
    api = new ApiRegistry({
      client,
      etcdPrefix: flags.etcd.prefix,
      eventTtlSeconds: flags.eventTtlSeconds,
      watchCache: flags.watchCache,
      log,
      ...(opts.admission ? { admission: opts.admission } : {}),
      admissionOptions: flags.admission,
    });
    registry = api.registry;
    if (kubeletClient) api.setKubeletClient(kubeletClient);
    compactor = new Compactor(client, { intervalMs: flags.etcd.compactionIntervalMs, logger: log });
    compactor.start();
    // The store may come up after the API server: readiness waits for the namespaces as for the caches,
    // retrying in the background so a /readyz never waits on the store.
    const made = api;
    let namespacesMade = false;
    let attempt: Promise<void> | undefined;
    const makeNamespaces = (): void => {
      attempt ??= made.ensureSystemNamespaces().then(() => made.ensureSystemPriorityClasses()).then(
        () => {
          namespacesMade = true;
        },
        (e: unknown) => {
          attempt = undefined;
          log.warn({ err: (e as Error).message }, 'making the system namespaces and priority classes failed; retrying on /readyz');
        },
      );
    };
    makeNamespaces();
    deps.openapi = deps.openapi ?? api.openapi(KUBERNETES_GIT_VERSION);
    deps.readyChecks = [
      ...(deps.readyChecks ?? []),
      made.readyCheck(),
      {
        name: 'system-namespaces',
        check: async () => {
          if (namespacesMade) return;
          makeNamespaces();
          throw new Error('the system namespaces are not made yet');
        },
      },
    ];
  }
  const running = await startApiServer(
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
    { ...deps, registry: registry ?? new ResourceRegistry(), storeCheck, log },
  );
  if (api === undefined) return running;
  api.startStorageObjects(running.metrics);
  const made = api;
  return {
    ...running,
    port: running.port,
    url: running.url,
    metrics: running.metrics,
    async stop(graceMs?: number): Promise<void> {
      await running.stop(graceMs);
      await compactor?.stop();
      await made.close();
      client?.close();
    },
  };
}
