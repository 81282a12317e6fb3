// The API server's shell, assembled: the TLS listener (HTTP/2 and HTTP/1.1), the request pipeline,
// the built-in endpoints and the registry's resources. What it needs from outside is a check that the
// store answers (readiness) and the registry; everything else comes from its configuration.
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { Authenticator } from './authn/authenticator.js';
import type { UserInfo } from './authn/user-info.js';
import type { BuiltinEndpoints } from './endpoints/builtin.js';
import { Discovery } from './endpoints/discovery.js';
import { HealthChecks, cachedCheck, type HealthCheck, type HealthEndpoint } from './endpoints/health.js';
import { EMPTY_OPENAPI, OpenApiV3, type OpenApiV3Source } from './endpoints/openapi.js';
import { versionInfo } from './endpoints/version.js';
import { InflightLimiter } from './http/inflight.js';
import { listenSecure } from './http/secure-server.js';
import { ApiServerMetrics } from './metrics.js';
import { RequestPipeline } from './request-pipeline.js';
import type { ResourceRegistry } from './resource-registry.js';

/** kube-apiserver hard-codes this (3 MiB: twice etcd's request limit, for JSON's bulk over protobuf). */
export const DEFAULT_MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/** Go's default for HTTP/2 concurrent streams, which kube-apiserver keeps when its flag is 0. */
export const DEFAULT_HTTP2_MAX_STREAMS = 250;

export interface ApiServerConfig {
  readonly bindAddress: string;
  /** 0 picks a free port (tests). */
  readonly securePort: number;
  /** Where clients reach this server (discovery's serverAddressByClientCIDRs); defaults to the bind address or the host name. */
  readonly advertiseAddress?: string;
  readonly servingCertPem: string;
  readonly servingKeyPem: string;
  /** Client certificates signed by this bundle authenticate; none: only tokens do. */
  readonly clientCaPem?: string;
  readonly tokens?: ReadonlyMap<string, UserInfo>;
  readonly anonymousAuth: boolean;
  readonly maxRequestsInflight: number;
  readonly maxMutatingRequestsInflight: number;
  readonly requestTimeoutMs: number;
  readonly minRequestTimeoutSeconds: number;
  readonly maxRequestBodyBytes: number;
  /** 0: DEFAULT_HTTP2_MAX_STREAMS. */
  readonly http2MaxStreamsPerConnection: number;
  readonly etcdHealthcheckTimeoutMs: number;
  /** Bounds with defaults kube-apiserver hard-codes (or Node's, where Go has none to copy). */
  readonly maxHeaderBytes?: number;
  readonly headersTimeoutMs?: number;
  readonly idleTimeoutMs?: number;
  readonly handshakeTimeoutMs?: number;
  readonly bodyIdleTimeoutMs?: number;
  readonly streamStallTimeoutMs?: number;
}

export interface ApiServerDeps {
  readonly registry: ResourceRegistry;
  /** Resolves when the store answers (a quorum read); backs the `etcd` health check. */
  readonly storeCheck: () => Promise<void>;
  readonly openapi?: OpenApiV3Source;
  /** More /readyz checks (the registry's watch caches, say). */
  readonly readyChecks?: readonly HealthCheck[];
  readonly log: Logger;
  readonly random?: () => number;
  readonly build?: { readonly commit?: string; readonly date?: string };
  readonly metrics?: ApiServerMetrics;
}

export interface RunningApiServer {
  readonly port: number;
  /** `https://<host>:<port>` for clients on this machine. */
  readonly url: string;
  readonly metrics: ApiServerMetrics;
  /** Fails /readyz, ends watches and in-flight requests (up to `graceMs`), closes every connection. */
  stop(graceMs?: number): Promise<void>;
}

function clientHost(bind: string): string {
  if (bind === '0.0.0.0' || bind === '') return '127.0.0.1';
  if (bind === '::') return '[::1]';
  return bind.includes(':') ? `[${bind}]` : bind;
}

export async function startApiServer(config: ApiServerConfig, deps: ApiServerDeps): Promise<RunningApiServer> {
  const log = deps.log.child({ component: 'apiserver' });
  const metrics = deps.metrics ?? new ApiServerMetrics();
  let stopping = false;
  const etcd = cachedCheck('etcd', deps.storeCheck, { timeoutMs: config.etcdHealthcheckTimeoutMs, ttlMs: 1000 });
  const ping: HealthCheck = { name: 'ping', check: async () => {} };
  const shutdown: HealthCheck = {
    name: 'shutdown',
    check: async () => {
      if (stopping) throw new Error('process is shutting down');
    },
  };
  const checks: Record<HealthEndpoint, readonly HealthCheck[]> = {
    healthz: [ping, etcd],
    livez: [ping, etcd],
    readyz: [ping, etcd, ...(deps.readyChecks ?? []), shutdown],
  };
  const limiter = new InflightLimiter({ readOnly: config.maxRequestsInflight, mutating: config.maxMutatingRequestsInflight });
  metrics.watchInflight(limiter);

  // Bound below, once the port is known (discovery names it).
  let serverAddress = '';
  const builtin: BuiltinEndpoints = {
    registry: deps.registry,
    discovery: new Discovery(deps.registry, {
      get serverAddress() {
        return serverAddress;
      },
    }),
    health: new HealthChecks(checks, log),
    healthCheckNames: {
      healthz: checks.healthz.map((c) => c.name),
      livez: checks.livez.map((c) => c.name),
      readyz: checks.readyz.map((c) => c.name),
    },
    openapi: new OpenApiV3(deps.openapi ?? EMPTY_OPENAPI),
    metrics,
    version: versionInfo(deps.build),
  };
  const pipeline = new RequestPipeline({
    registry: deps.registry,
    authenticator: new Authenticator({ x509: config.clientCaPem !== undefined, ...(config.tokens ? { tokens: config.tokens } : {}) }),
    anonymousAuth: config.anonymousAuth,
    limiter,
    metrics,
    builtin,
    limits: {
      requestTimeoutMs: config.requestTimeoutMs,
      minRequestTimeoutSeconds: config.minRequestTimeoutSeconds,
      maxRequestBodyBytes: config.maxRequestBodyBytes,
      bodyIdleTimeoutMs: config.bodyIdleTimeoutMs ?? 10_000,
      streamStallTimeoutMs: config.streamStallTimeoutMs ?? 60_000,
    },
    log,
    random: deps.random ?? Math.random,
  });
  const server = await listenSecure({
    host: config.bindAddress,
    port: config.securePort,
    certPem: config.servingCertPem,
    keyPem: config.servingKeyPem,
    ...(config.clientCaPem !== undefined ? { clientCaPem: config.clientCaPem } : {}),
    // kube-apiserver: MaxHeaderBytes 1 MiB; ours is smaller, since each connection may hold that much.
    maxHeaderBytes: config.maxHeaderBytes ?? 64 * 1024,
    handshakeTimeoutMs: config.handshakeTimeoutMs ?? 32_000,
    // kube-apiserver: ReadHeaderTimeout 32 s and IdleTimeout 90 s.
    headersTimeoutMs: config.headersTimeoutMs ?? 32_000,
    idleTimeoutMs: config.idleTimeoutMs ?? 90_000,
    maxConcurrentStreams: config.http2MaxStreamsPerConnection > 0 ? config.http2MaxStreamsPerConnection : DEFAULT_HTTP2_MAX_STREAMS,
    log,
    onRequest: (req, res) => pipeline.handle(req, res),
  });
  const advertise = config.advertiseAddress ?? (config.bindAddress === '0.0.0.0' || config.bindAddress === '::' ? hostname() : config.bindAddress);
  serverAddress = `${advertise.includes(':') ? `[${advertise}]` : advertise}:${server.port}`;
  log.info({ port: server.port, bindAddress: config.bindAddress }, 'serving securely');

  return {
    port: server.port,
    url: `https://${clientHost(config.bindAddress)}:${server.port}`,
    metrics,
    async stop(graceMs = 5000): Promise<void> {
      if (stopping) return;
      stopping = true;
      server.stopAccepting();
      await pipeline.tracker.drain(graceMs);
      server.destroyAll();
      metrics.stop();
      log.info('stopped');
    },
  };
}
