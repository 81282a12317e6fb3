// The HTTP/1.1 side of the client port, answering as etcd 3.4 does: GET /health ({"health":"true"}, or
// {"health":"false"} with 503 when the member has no leader or an alarm is raised), GET /version, and
// /metrics in Prometheus' text format, and etcd's JSON gateway under /v3/ (gateway/gateway.ts). Every response carries etcd's CORS headers.
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { StoreApi } from '../member/store-api.js';
import type { GatewayHandler } from '../gateway/gateway.js';
import { verifiedPeerName } from '../grpc/peer-name.js';
import { gatewayWebsocket } from '../gateway/ws-proxy.js';

import { SERVER_VERSION } from '../member/maintenance.js';

export const ETCD_SERVER_VERSION = SERVER_VERSION;
export const ETCD_CLUSTER_VERSION = '3.4.0';

export interface ClientHttpOptions {
  readonly store: StoreApi;
  readonly registry: Registry;
  readonly logger: Logger;
  /** Setpoint's own version, added to /version as "setpoint" when given. */
  readonly setpointVersion?: string;
  /** etcd's JSON gateway (/v3/…): true when it took the request. */
  readonly gateway?: GatewayHandler;
  /** --client-cert-auth: a gateway request with a client certificate's CN is refused while auth is on. */
  readonly clientCertAuth?: boolean;
}

function cors(res: ServerResponse): void {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Allow-Methods', 'POST, GET, OPTIONS, PUT, DELETE');
  res.setHeader('Access-Control-Allow-Headers', 'accept, content-type, authorization');
}

/** Go's http.Error: the message as plain text with a newline, and nosniff. */
function httpError(res: ServerResponse, status: number, message: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(message + '\n');
}

function methodNotAllowed(res: ServerResponse): void {
  res.setHeader('Allow', 'GET');
  httpError(res, 405, 'Method Not Allowed');
}

async function health(store: StoreApi, log: Logger, res: ServerResponse): Promise<void> {
  let h: { health: boolean; reason: string };
  try {
    h = await store.health();
  } catch (e) {
    h = { health: false, reason: e instanceof Error ? e.message : String(e) };
  }
  // etcd 3.4 answers only {"health": ...}; the reason (3.5 adds it to the body) goes to the log.
  const body = JSON.stringify({ health: String(h.health) });
  if (!h.health) {
    log.debug({ reason: h.reason }, '/health: unhealthy');
    httpError(res, 503, body);
    return;
  }
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.end(body);
}

export function createClientHttp(opts: ClientHttpOptions): Server {
  const log = opts.logger.child({ component: 'client-http' });
  const version = JSON.stringify({
    etcdserver: ETCD_SERVER_VERSION,
    etcdcluster: ETCD_CLUSTER_VERSION,
    ...(opts.setpointVersion ? { setpoint: opts.setpointVersion } : {}),
  });
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // etcd 3.4 (embed/serve.go): the gateway would not use the CN as the user, so it refuses the request
    // rather than serve it as someone else (before the CORS headers).
    if (opts.clientCertAuth === true && opts.store.auth?.enabled === true && /^\/v3(beta)?\//.test(req.url ?? '')) {
      const cn = verifiedPeerName(req.socket);
      if (cn !== undefined && cn !== '') return httpError(res, 400, 'CommonName of client sending a request against gateway will be ignored and not used as expected');
    }
    cors(res);
    if (opts.gateway?.(req, res)) return;
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    switch (path) {
      case '/health':
        if (req.method !== 'GET') return methodNotAllowed(res);
        return health(opts.store, log, res);
      case '/version':
        if (req.method !== 'GET') return methodNotAllowed(res);
        res.setHeader('Content-Type', 'application/json');
        res.end(version);
        return;
      case '/metrics': {
        const text = await opts.registry.metrics();
        res.setHeader('Content-Type', opts.registry.contentType);
        res.end(text);
        return;
      }
      default:
        return httpError(res, 404, '404 page not found');
    }
  };
  const serve = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((e: unknown) => {
      log.error({ err: e, url: req.url }, 'HTTP request failed');
      if (!res.headersSent) httpError(res, 500, 'Internal Server Error');
      else res.destroy();
    });
  };
  const server = createServer(serve);
  const websocket = opts.gateway ? gatewayWebsocket(opts.gateway) : undefined;
  // Websocket upgrades to the gateway's paths go to its proxy; any other upgrade (h2c, a websocket
  // elsewhere) is served as the plain request it also is, as Go's server serves it: its head, without the
  // upgrade headers, goes back into the socket before what followed it, and the socket back to the parser.
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    if (websocket?.(req, socket, head)) return;
    const lines = [`${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/1.1`];
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i] as string;
      if (!/^(upgrade|connection|http2-settings)$/i.test(name)) lines.push(`${name}: ${req.rawHeaders[i + 1] as string}`);
    }
    socket.unshift(Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1'), head]));
    server.emit('connection', socket);
    socket.resume();
  });
  return server;
}
