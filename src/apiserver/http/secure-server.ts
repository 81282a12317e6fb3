// The API server's listener: TLS with HTTP/2 and HTTP/1.1 on one port (ALPN picks), client
// certificates requested (and checked against the client CA) but not required, so bearer tokens and
// anonymous probes work too. Its bounds are a hostile client's: a TLS handshake and the request headers
// must arrive in time, headers are capped in size, an HTTP/2 connection gets a fixed number of
// concurrent streams, and an idle connection (no request on it) is closed.
import http2 from 'node:http2';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { NodeRequest, NodeResponse } from './node-http.js';

export interface SecureServerOptions {
  readonly host: string;
  readonly port: number;
  readonly certPem: string;
  readonly keyPem: string;
  /** Client certificates are requested and verified against this CA bundle when given. */
  readonly clientCaPem?: string;
  /** Largest request header block (HTTP/1.1 head, HTTP/2 header list), bytes. */
  readonly maxHeaderBytes: number;
  readonly handshakeTimeoutMs: number;
  /** Time for an HTTP/1.1 request's headers to arrive. */
  readonly headersTimeoutMs: number;
  /** A connection with no request in progress for this long is closed. */
  readonly idleTimeoutMs: number;
  readonly maxConcurrentStreams: number;
  readonly log: Logger;
  readonly onRequest: (req: NodeRequest, res: NodeResponse) => void;
}

export interface SecureServer {
  readonly port: number;
  /** Stops accepting; asks HTTP/2 clients to go away and closes idle HTTP/1.1 connections. */
  stopAccepting(): void;
  /** Closes every connection still open. */
  destroyAll(): void;
}

export async function listenSecure(opts: SecureServerOptions): Promise<SecureServer> {
  const log = opts.log;
  const server = http2.createSecureServer(
    {
      cert: opts.certPem,
      key: opts.keyPem,
      allowHTTP1: true,
      minVersion: 'TLSv1.2',
      handshakeTimeout: opts.handshakeTimeoutMs,
      ...(opts.clientCaPem !== undefined ? { ca: opts.clientCaPem, requestCert: true, rejectUnauthorized: false } : {}),
      settings: { maxConcurrentStreams: opts.maxConcurrentStreams, maxHeaderListSize: opts.maxHeaderBytes },
      maxSessionRejectedStreams: 100,
    },
    opts.onRequest,
  );
  // HTTP/1.1 limits live on the server object (node:http reads them per connection).
  const h1 = server as unknown as { maxHeaderSize: number; headersTimeout: number; requestTimeout: number; keepAliveTimeout: number; connectionsCheckingInterval: number };
  h1.maxHeaderSize = opts.maxHeaderBytes;
  h1.headersTimeout = opts.headersTimeoutMs;
  // The body's own deadlines are the request pipeline's; this only reaps requests nobody reads.
  h1.requestTimeout = Math.max(opts.headersTimeoutMs, 300_000);
  h1.keepAliveTimeout = opts.idleTimeoutMs;
  h1.connectionsCheckingInterval = 1000;

  const sockets = new Set<Socket>();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('session', (session) => {
    sessions.add(session);
    let open = 0;
    session.on('stream', (stream) => {
      open++;
      stream.once('close', () => open--);
    });
    // Idle means no stream: a quiet watch keeps its connection.
    session.setTimeout(opts.idleTimeoutMs, () => {
      if (open === 0 && !session.closed) session.close();
    });
    session.on('error', (err) => log.debug({ err }, 'http2 session error'));
    session.once('close', () => sessions.delete(session));
  });
  server.on('sessionError', (err) => log.debug({ err }, 'http2 session error'));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => log.error({ err }, 'listener error'));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : opts.port;
  return {
    port,
    stopAccepting: () => {
      server.close();
      for (const s of sessions) if (!s.closed) s.close();
      // Http2SecureServer has it with allowHTTP1 (node:http's), though its typings do not say so.
      (server as unknown as { closeIdleConnections(): void }).closeIdleConnections();
    },
    destroyAll: () => {
      for (const s of sessions) s.destroy();
      for (const s of sockets) s.destroy();
    },
  };
}
