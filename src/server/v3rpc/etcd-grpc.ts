// The etcd v3 gRPC face of a member: a grpc-js Server carrying KV, Watch, Lease, Cluster, Maintenance, Auth
// and grpc.health.v1, with etcd's message size limits and keepalive settings. It owns no listener: the
// client port (embed/client-port.ts) hands it HTTP/2 connections through a connection injector, so gRPC and
// HTTP/1.1 share one port as they do in etcd.
import { Server, ServerCredentials } from '@grpc/grpc-js';
import type { ChannelOptions, ServiceDefinition, UntypedServiceImplementation } from '@grpc/grpc-js';
import type { BidiCore } from '../grpc/bidi.js';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { StoreApi } from '../member/store-api.js';
import type { Gauge } from 'prom-client';
import type { GrpcMetrics } from '../grpc/call-metrics.js';
import type { EdgeContext, UnaryCore } from './edge.js';
import { DEFAULT_MAX_REQUEST_BYTES, GRPC_OVERHEAD_BYTES, bidiCore, unaryCore } from './edge.js';
import type { FastUnaryMethod } from '../grpc/fast-unary.js';
import { serverStreamCore } from './server-stream.js';
import type { ServerStreamCore } from './server-stream.js';
import type { FastStreamMethod } from '../grpc/front.js';
import { assertGrpcJsVersion } from '../grpc/grpc-js-internals.js';
import { LeaderGuard } from './leader-guard.js';
import { etcdServiceDefinition, healthServiceDefinition } from './etcd-proto.js';
import type { ByteCounters, EtcdServiceName } from './etcd-proto.js';
import { kvService } from './kv-service.js';
import { watchService } from './watch-service.js';
import { leaseService } from './lease-service.js';
import { clusterService } from './cluster-service.js';
import { maintenanceService } from './maintenance-service.js';
import { authService } from './auth-service.js';
import { healthService } from './health-service.js';

export interface EtcdGrpcOptions {
  readonly store: StoreApi;
  readonly logger: Logger;
  /** The counters the services keep: gRPC's per call, and the open Watch streams (etcd_debugging_mvcc_watch_stream_total). */
  readonly metrics: { readonly grpc: GrpcMetrics; readonly watchStreams: Gauge };
  /** etcd's --max-request-bytes (1.5 MiB by default). */
  readonly maxRequestBytes?: number;
  /** The member's election timeout: how often leader loss is checked for leader-requiring streams. */
  readonly electionTimeoutMs?: number;
  /** How long close() lets calls finish before cutting the connections. */
  readonly shutdownGraceMs?: number;
}

export interface EtcdGrpc {
  /** Serves one accepted connection (already past TLS, if any) that opened with the HTTP/2 preface. */
  injectConnection(conn: Duplex): void;
  /** The hot KV calls by :path, for the client port's own HTTP/2 server (grpc/front.ts). */
  readonly fastMethods: ReadonlyMap<string, FastUnaryMethod>;
  /** The bidi streams (Watch, LeaseKeepAlive) by :path, for the same server. */
  readonly fastStreams: ReadonlyMap<string, FastStreamMethod>;
  /** grpc-js's receive limit, which the fast path applies too. */
  readonly maxReceiveBytes: number;
  /** Every etcd method with a handler core, by `Service/Method` (KV/Range), for the JSON gateway. */
  readonly methods: ReadonlyMap<string, EtcdMethod>;
  close(): Promise<void>;
}

/** One etcd method as another edge (the JSON gateway) runs it: the gRPC codecs and the handler's core. */
export interface EtcdMethod {
  readonly deserialize: (buf: Buffer) => unknown;
  readonly serialize: (res: unknown) => Buffer;
  readonly unary?: UnaryCore;
  readonly bidi?: BidiCore;
  readonly serverStream?: ServerStreamCore;
}

/**
 * etcd's server settings: receive limit MaxRequestBytes + 512 KiB (gRPC refuses bigger messages itself),
 * unlimited sends, and its keepalive (ping idle clients every 2 h, drop them after 20 s without an answer).
 * grpc-js does not police how often clients ping, so etcdctl's 2 s keepalive pings never earn a GOAWAY
 * too_many_pings; permit_without_calls states the intent for grpc-js versions that may.
 */
export const KEEPALIVE_TIME_MS = 2 * 60 * 60 * 1000;
export const KEEPALIVE_TIMEOUT_MS = 20 * 1000;

function serverOptions(maxReceiveBytes: number): ChannelOptions {
  return {
    'grpc.max_receive_message_length': maxReceiveBytes,
    'grpc.max_send_message_length': -1,
    'grpc.keepalive_time_ms': KEEPALIVE_TIME_MS,
    'grpc.keepalive_timeout_ms': KEEPALIVE_TIMEOUT_MS,
    'grpc.keepalive_permit_without_calls': 1,
    // Nothing reads channelz, and it costs bookkeeping on every call. Off, grpc-js's forceShutdown no longer
    // finds the connections to cut, so close() destroys them itself.
    'grpc.enable_channelz': 0,
  };
}

/** The KV methods served by the fast unary path (Compact is rare and stays with grpc-js). */
const FAST_KV_METHODS = ['Range', 'Put', 'DeleteRange', 'Txn'] as const;

export function createEtcdGrpc(opts: EtcdGrpcOptions): EtcdGrpc {
  // Relayed streams reach into grpc-js's calls (grpc/coalesce.ts): refuse to start on an untested grpc-js.
  assertGrpcJsVersion();
  const maxRequestBytes = opts.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
  const log = opts.logger.child({ component: 'etcd-grpc' });
  const guard = new LeaderGuard(opts.store, { logger: log, ...(opts.electionTimeoutMs ? { electionTimeoutMs: opts.electionTimeoutMs } : {}) });
  const ctx: EdgeContext = { store: opts.store, log, metrics: opts.metrics.grpc, guard, maxRequestBytes };
  const received = opts.metrics.grpc.hot(opts.metrics.grpc.receivedBytes);
  const sent = opts.metrics.grpc.hot(opts.metrics.grpc.sentBytes);
  const bytes: ByteCounters = {
    received: (n) => received.inc(n),
    sent: (n) => sent.inc(n),
  };

  const maxReceiveBytes = maxRequestBytes + GRPC_OVERHEAD_BYTES;
  const server = new Server(serverOptions(maxReceiveBytes));
  const kvDef = etcdServiceDefinition('KV', bytes);
  const kv = kvService(ctx);
  server.addService(kvDef, kv);
  const watchDef = etcdServiceDefinition('Watch', bytes);
  const watch = watchService(ctx, opts.metrics.watchStreams);
  server.addService(watchDef, watch);
  const leaseDef = etcdServiceDefinition('Lease', bytes);
  const lease = leaseService(ctx);
  server.addService(leaseDef, lease);
  const services: [EtcdServiceName, ServiceDefinition, UntypedServiceImplementation][] = [
    ['KV', kvDef, kv],
    ['Watch', watchDef, watch],
    ['Lease', leaseDef, lease],
    ['Cluster', etcdServiceDefinition('Cluster', bytes), clusterService(ctx)],
    ['Maintenance', etcdServiceDefinition('Maintenance', bytes), maintenanceService(ctx)],
    ['Auth', etcdServiceDefinition('Auth', bytes), authService(ctx)],
  ];
  const methods = new Map<string, EtcdMethod>();
  for (const [, def, impl] of services.slice(3)) server.addService(def, impl);
  for (const [name, def, impl] of services) {
    for (const [method, m] of Object.entries(def)) {
      const unaryMethod = unaryCore(impl[method]);
      const bidiMethod = bidiCore(impl[method]);
      const streamMethod = serverStreamCore(impl[method]);
      methods.set(`${name}/${method}`, {
        deserialize: (buf) => m.requestDeserialize(buf),
        serialize: (res) => m.responseSerialize(res),
        ...(unaryMethod ? { unary: unaryMethod } : {}),
        ...(bidiMethod ? { bidi: bidiMethod } : {}),
        ...(streamMethod ? { serverStream: streamMethod } : {}),
      });
    }
  }
  server.addService(healthServiceDefinition(bytes), healthService(ctx));
  // TLS, when configured, is terminated by the client port before the connection gets here.
  const injector = server.createConnectionInjector(ServerCredentials.createInsecure());
  // The hot KV calls skip grpc-js's per-call machinery (grpc/fast-unary.ts); everything else goes through it.
  const fast: FastUnaryMethod[] = [];
  for (const name of FAST_KV_METHODS) {
    const def = kvDef[name];
    const core = unaryCore(kv[name]);
    if (!def || !core) throw new Error(`KV.${name} has no handler core`);
    fast.push({ path: def.path, deserialize: def.requestDeserialize, serialize: def.responseSerialize, ...core });
  }
  // Watch and lease keep-alive streams, served by the client port's own HTTP/2 server.
  const streams: FastStreamMethod[] = [];
  for (const [def, impl, name] of [[watchDef, watch, 'Watch'], [leaseDef, lease, 'LeaseKeepAlive']] as const) {
    const m = def[name];
    const core = bidiCore(impl[name]);
    if (!m || !core) throw new Error(`${name} has no handler core`);
    streams.push({ path: m.path, deserialize: m.requestDeserialize, serialize: m.responseSerialize, ...core });
  }

  let closed: Promise<void> | undefined;
  const conns = new Set<Duplex>();
  return {
    fastMethods: new Map(fast.map((m) => [m.path, m])),
    fastStreams: new Map(streams.map((m) => [m.path, m])),
    maxReceiveBytes,
    methods,
    injectConnection: (conn) => {
      conns.add(conn);
      conn.once('close', () => conns.delete(conn));
      injector.injectConnection(conn);
    },
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        guard.close();
        // Let unary calls finish; streams (watches, keep-alives) never do on their own, so cut them after the grace.
        const timer = setTimeout(() => {
          server.forceShutdown();
          for (const conn of conns) conn.destroy();
        }, opts.shutdownGraceMs ?? 1000);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      return closed;
    },
  };
}
