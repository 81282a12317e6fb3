// A member's client port(s), like etcd's --listen-client-urls: each URL is one listener serving the etcd
// v3 gRPC API and HTTP/1.1 (/health, /version, /metrics) together. https:// URLs terminate TLS here, with
// etcd's semantics for --cert-file/--key-file/--trusted-ca-file/--client-cert-auth, then route by the
// first bytes, so the same port answers etcdctl, the npm etcd3 client, curl and Prometheus.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { StoreApi } from '../member/store-api.js';
import type { EtcdMetrics } from './metrics.js';
import { createEtcdGrpc } from '../v3rpc/etcd-grpc.js';
import { createClientHttp } from './client-http.js';
import { createGateway } from '../gateway/gateway.js';
import { replayIntoSocket, sniff } from '../http2/connection-mux.js';
import type { ServerConnection } from '../http2/server-connection.js';
import { serveGrpcFront } from '../grpc/front.js';
import { verifiedPeerName } from '../grpc/peer-name.js';
import type { GrpcFrontOptions } from '../grpc/front.js';
import { duplexPair } from '../grpc/relay.js';
import { KEEPALIVE_TIME_MS, KEEPALIVE_TIMEOUT_MS } from '../v3rpc/etcd-grpc.js';

export interface ClientTlsOptions {
  readonly certFile: string;
  readonly keyFile: string;
  /** CA for client certificates. As in etcd, setting it alone already requires clients to present one. */
  readonly trustedCaFile?: string;
  /** Require a client certificate signed by trustedCaFile (--client-cert-auth). */
  readonly clientCertAuth?: boolean;
}

export interface ClientPortOptions {
  /** e.g. http://127.0.0.1:2379, https://0.0.0.0:2379; port 0 picks a free port. */
  readonly listenUrls: readonly string[];
  readonly store: StoreApi;
  readonly tls?: ClientTlsOptions;
  readonly maxRequestBytes?: number;
  readonly logger: Logger;
  readonly metrics: EtcdMetrics;
  readonly electionTimeoutMs?: number;
  readonly setpointVersion?: string;
  /** Concurrent streams per HTTP/2 connection (--max-concurrent-streams; http2/limits.ts has the default). */
  readonly maxConcurrentStreams?: number;
  /** Server keepalive, etcd's 2 h / 20 s unless given (tests shorten it). */
  readonly keepalive?: { readonly timeMs: number; readonly timeoutMs: number };
}

export interface ClientPort {
  /** The listen URLs with the ports actually bound, in the order given. */
  readonly addresses: readonly string[];
  close(): Promise<void>;
}

interface ListenUrl {
  readonly secure: boolean;
  readonly host: string;
  readonly port: number;
}

/** How long a stopping port waits for fast calls in flight before it goes on closing. */
const FRONT_DRAIN_MS = 1000;

function parseListenUrl(raw: string): ListenUrl {
  const u = new URL(raw);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`listen URL ${raw}: scheme must be http or https`);
  if (u.port === '' && !/:\d+$/.test(u.host)) throw new Error(`listen URL ${raw}: a port is required`);
  // URL keeps the brackets of an IPv6 host; listen() wants the bare address.
  return { secure: u.protocol === 'https:', host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(u.port) };
}

function formatUrl(l: ListenUrl, port: number): string {
  const host = l.host.includes(':') ? `[${l.host}]` : l.host;
  return `${l.secure ? 'https' : 'http'}://${host}:${port}`;
}

/**
 * ALPN: gRPC clients offer only h2 and get it; clients that also offer http/1.1 (curl, browsers) get
 * HTTP/1.1, because the HTTP routes are served over HTTP/1.1 only (etcd 3.4 also serves them over h2).
 */
function chooseAlpn({ protocols }: { protocols: string[] }): string | undefined {
  if (protocols.includes('http/1.1')) return 'http/1.1';
  return protocols.includes('h2') ? 'h2' : undefined;
}

function tlsOptions(t: ClientTlsOptions): tls.TlsOptions {
  const verifyClients = t.clientCertAuth === true || t.trustedCaFile !== undefined;
  return {
    cert: readFileSync(t.certFile),
    key: readFileSync(t.keyFile),
    ...(t.trustedCaFile ? { ca: readFileSync(t.trustedCaFile) } : {}),
    requestCert: verifyClients,
    rejectUnauthorized: verifyClients,
    ALPNCallback: chooseAlpn,
  };
}

function listen(server: net.Server, l: ListenUrl): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(l.port, l.host, () => {
      server.removeListener('error', reject);
      const addr = server.address();
      resolve(typeof addr === 'object' && addr ? addr.port : l.port);
    });
  });
}

export async function startClientPort(opts: ClientPortOptions): Promise<ClientPort> {
  const log = opts.logger.child({ component: 'client-port' });
  const urls = opts.listenUrls.map(parseListenUrl);
  if (urls.length === 0) throw new Error('no client URLs to listen on');
  if (urls.some((u) => u.secure) && !opts.tls) throw new Error('https client URLs need --cert-file and --key-file');
  const secureOptions = urls.some((u) => u.secure) && opts.tls ? tlsOptions(opts.tls) : undefined;
  if (opts.tls && !urls.some((u) => u.secure)) log.warn('TLS is configured but every client URL is http: serving plaintext, as etcd does');

  const grpc = createEtcdGrpc({
    store: opts.store,
    logger: opts.logger,
    metrics: opts.metrics,
    ...(opts.maxRequestBytes !== undefined ? { maxRequestBytes: opts.maxRequestBytes } : {}),
    ...(opts.electionTimeoutMs !== undefined ? { electionTimeoutMs: opts.electionTimeoutMs } : {}),
  });
  const http = createClientHttp({
    store: opts.store,
    registry: opts.metrics.registry,
    logger: opts.logger,
    ...(opts.setpointVersion ? { setpointVersion: opts.setpointVersion } : {}),
    clientCertAuth: opts.tls?.clientCertAuth === true,
    gateway: createGateway({ methods: grpc.methods, maxReceiveBytes: grpc.maxReceiveBytes, logger: opts.logger }),
  });
  const sockets = new Set<Socket>();
  const fronts = new Set<ServerConnection>();
  // HTTP/2 connections meet the port's own server (grpc/front.ts), which relays what it does not serve to grpc-js.
  const front: GrpcFrontOptions = {
    fast: grpc.fastMethods,
    streams: grpc.fastStreams,
    maxReceive: grpc.maxReceiveBytes,
    log,
    keepaliveTimeMs: opts.keepalive?.timeMs ?? KEEPALIVE_TIME_MS,
    keepaliveTimeoutMs: opts.keepalive?.timeoutMs ?? KEEPALIVE_TIMEOUT_MS,
    ...(opts.maxConcurrentStreams !== undefined ? { maxConcurrentStreams: opts.maxConcurrentStreams } : {}),
    backend: () => {
      const [ours, grpcs] = duplexPair();
      grpc.injectConnection(grpcs);
      return ours;
    },
  };

  const serve = (sock: Socket): void => {
    // Small frames (window updates, acks, headers) must not wait for Nagle: with delayed ACKs on the
    // other side every flow-control round trip would cost tens of milliseconds.
    sock.setNoDelay(true);
    sockets.add(sock);
    sock.once('close', () => sockets.delete(sock));
    sniff(sock, (protocol, head) => {
      if (protocol === 'h2') {
        // With --client-cert-auth, the certificate's CN is the user of calls that carry no token (as etcd).
        const conn = serveGrpcFront(sock, head, front, opts.tls?.clientCertAuth === true ? verifiedPeerName(sock) : undefined);
        fronts.add(conn);
        sock.once('close', () => fronts.delete(conn));
      } else {
        replayIntoSocket(sock, head);
        http.emit('connection', sock);
        sock.resume();
      }
    });
  };

  const servers: net.Server[] = [];
  const addresses: string[] = [];
  try {
    for (const l of urls) {
      let server: net.Server;
      if (l.secure && secureOptions) {
        const s = tls.createServer(secureOptions, serve);
        // A refused or broken handshake concerns that client only.
        s.on('tlsClientError', (err, sock) => {
          log.debug({ err: err.message, remote: sock.remoteAddress }, 'TLS handshake failed');
        });
        server = s;
      } else {
        server = net.createServer(serve);
      }
      servers.push(server);
      const port = await listen(server, l);
      addresses.push(formatUrl(l, port));
    }
  } catch (e) {
    for (const s of servers) s.close();
    await grpc.close();
    throw e;
  }
  log.info({ addresses }, 'serving client requests');

  let closing: Promise<void> | undefined;
  return {
    addresses,
    close: () => {
      closing ??= (async () => {
        const stopped = Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
        http.closeIdleConnections();
        // GOAWAY to every HTTP/2 client, so new calls go elsewhere while the ones in flight get their answers.
        let timer: NodeJS.Timeout | undefined;
        const grace = new Promise((r) => (timer = setTimeout(r, FRONT_DRAIN_MS)));
        await Promise.race([Promise.all([...fronts].map((f) => f.goaway())), grace]);
        clearTimeout(timer);
        await grpc.close();
        http.closeAllConnections();
        for (const sock of sockets) sock.destroy();
        await stopped;
      })();
      return closing;
    },
  };
}
