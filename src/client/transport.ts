// How bytes reach the API server: one HTTP/2 session (multiplexed, reconnected when it closes or is
// told to go away) or, for servers that do not speak h2 and for plain http://, HTTP/1.1 with a
// keep-alive agent. A failed h2 connect falls back to HTTP/1.1 once and stays there.
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { ClientError } from './api-status-error.js';

export interface TlsOptions {
  readonly ca?: string | Buffer;
  readonly cert?: string | Buffer;
  readonly key?: string | Buffer;
  readonly insecureSkipTlsVerify?: boolean;
  readonly serverName?: string;
}

export interface RawRequest {
  readonly method: string;
  /** Path with query. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Buffer;
  readonly signal: AbortSignal;
}

export interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Readable;
  /** Which protocol answered ('h2' or 'http/1.1'). */
  readonly protocol: string;
}

export type Protocol = 'auto' | 'h2' | 'http/1.1';

/** Errors that mean the request never reached a server that answered: safe to retry an idempotent one. */
export function isConnectionError(e: unknown): boolean {
  if (e instanceof ClientError) return e.code === 'CLIENT_TRANSPORT';
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|ERR_HTTP2_.*|ERR_SSL_.*)$/.test(code);
}

/**
 * HTTP/2 receive windows. Node's defaults (64 KiB per stream and for the whole connection) let the server
 * send one stream 64 KiB per turn of this process's event loop: a busy controller's pod watch then
 * trails the store, and a large LIST crawls. Go's client opens 4 MiB per stream; these are of that order.
 * Node gives the connection's window back as data arrives (a stream that is not read holds only its own
 * window), so the larger connection window costs nothing when one watch stalls.
 */
const STREAM_WINDOW_BYTES = 4 << 20;
const CONNECTION_WINDOW_BYTES = 64 << 20;

/** How long a new HTTP/2 connection may take to be ready (TCP, TLS, the server's SETTINGS). */
const CONNECT_TIMEOUT_MS = 10_000;

/** `p`, or a rejection as soon as the signal aborts (p itself goes on and is dealt with by its owner). */
function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return p;
  if (signal.aborted) return Promise.reject(new Error('aborted'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

export class Transport {
  private readonly url: URL;
  private session: http2.ClientHttp2Session | undefined;
  private connecting: Promise<http2.ClientHttp2Session> | undefined;
  private useH1: boolean;
  private readonly agent: http.Agent;
  private closed = false;
  private active = 0;

  constructor(
    server: string,
    private readonly tls: TlsOptions,
    private readonly protocol: Protocol = 'auto',
  ) {
    this.url = new URL(server);
    const secure = this.url.protocol === 'https:';
    this.useH1 = !secure || protocol === 'http/1.1';
    this.agent = secure ? new https.Agent({ keepAlive: true, maxSockets: 64, ...this.tlsOptions() }) : new http.Agent({ keepAlive: true, maxSockets: 64 });
  }

  get base(): string {
    return this.url.origin;
  }

  private tlsOptions(): https.AgentOptions {
    return {
      ...(this.tls.ca !== undefined ? { ca: this.tls.ca } : {}),
      ...(this.tls.cert !== undefined ? { cert: this.tls.cert } : {}),
      ...(this.tls.key !== undefined ? { key: this.tls.key } : {}),
      rejectUnauthorized: this.tls.insecureSkipTlsVerify !== true,
      ...(this.tls.serverName !== undefined ? { servername: this.tls.serverName } : {}),
    };
  }

  async send(req: RawRequest): Promise<RawResponse> {
    if (this.closed) throw new ClientError('CLIENT_TRANSPORT', 'client is closed');
    if (!this.useH1) {
      let session: http2.ClientHttp2Session;
      try {
        session = await abortable(this.h2session(), req.signal);
      } catch (e) {
        if (req.signal?.aborted) throw new ClientError('CLIENT_TRANSPORT', `connect ${this.url.host}: aborted`, { cause: e });
        if (this.protocol === 'h2') throw new ClientError('CLIENT_TRANSPORT', `connect ${this.url.host}: ${(e as Error).message}`, { cause: e });
        // The server may speak only HTTP/1.1; a refused connection is retried there too (and fails the same way).
        this.useH1 = true;
        return this.sendH1(req);
      }
      return this.sendH2(session, req);
    }
    return this.sendH1(req);
  }

  private h2session(): Promise<http2.ClientHttp2Session> {
    const s = this.session;
    if (s && !s.closed && !s.destroyed) return Promise.resolve(s);
    if (this.connecting) return this.connecting;
    const connecting = new Promise<http2.ClientHttp2Session>((resolve, reject) => {
      const session = http2.connect(this.url.origin, { ...this.tlsOptions(), peerMaxConcurrentStreams: 250, settings: { initialWindowSize: STREAM_WINDOW_BYTES } });
      const fail = (e: Error): void => {
        clearTimeout(timer);
        if (this.connecting === connecting) this.connecting = undefined;
        session.destroy();
        reject(e);
      };
      // A connection that neither fails nor completes (a server that accepted but does not answer the TLS
      // handshake) must not hold every later request: they all wait on this one attempt.
      const timer = setTimeout(() => fail(new Error(`no TLS/HTTP2 handshake within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
      session.once('error', fail);
      session.once('connect', () => {
        clearTimeout(timer);
        session.off('error', fail);
        this.connecting = undefined;
        if (session.alpnProtocol !== 'h2') {
          session.destroy();
          reject(new Error(`server did not negotiate h2 (${String(session.alpnProtocol)})`));
          return;
        }
        session.setLocalWindowSize(CONNECTION_WINDOW_BYTES);
        // Later session errors end its streams; the next request makes a new session.
        session.on('error', () => {});
        session.on('goaway', () => {
          if (this.session === session) this.session = undefined;
        });
        session.on('close', () => {
          if (this.session === session) this.session = undefined;
        });
        // An idle session must not hold the process open.
        session.unref();
        this.session = session;
        resolve(session);
      });
    });
    this.connecting = connecting;
    return connecting;
  }

  private sendH2(session: http2.ClientHttp2Session, req: RawRequest): Promise<RawResponse> {
    return new Promise((resolve, reject) => {
      const headers: http2.OutgoingHttpHeaders = { ':method': req.method, ':path': req.path, ':authority': this.url.host };
      for (const [k, v] of Object.entries(req.headers)) headers[k.toLowerCase()] = v;
      let stream: http2.ClientHttp2Stream;
      try {
        stream = session.request(headers, { endStream: req.body === undefined, signal: req.signal });
      } catch (e) {
        reject(new ClientError('CLIENT_TRANSPORT', `request: ${(e as Error).message}`, { cause: e }));
        return;
      }
      // Streams hold the process open; an idle session does not.
      this.active++;
      session.ref();
      let answered = false;
      stream.once('close', () => {
        this.active--;
        if (this.active === 0 && !session.destroyed) session.unref();
        // A session that dies (the server was killed, the connection reset) destroys its streams without
        // an error: a stream that closes unanswered must fail its request, or the caller waits forever.
        if (!answered) reject(new ClientError('CLIENT_TRANSPORT', `${req.method} ${req.path}: the connection closed before an answer (code ${stream.rstCode ?? 'none'})`));
      });
      stream.once('error', (e) => {
        if (!answered) reject(new ClientError('CLIENT_TRANSPORT', `${req.method} ${req.path}: ${e.message}`, { cause: e }));
      });
      stream.once('response', (h) => {
        answered = true;
        const status = Number(h[':status']);
        resolve({ status, headers: h as Record<string, string | string[] | undefined>, body: stream, protocol: 'h2' });
      });
      if (req.body !== undefined) stream.end(req.body);
    });
  }

  private sendH1(req: RawRequest): Promise<RawResponse> {
    const secure = this.url.protocol === 'https:';
    const mod = secure ? https : http;
    return new Promise((resolve, reject) => {
      const r = mod.request(
        {
          host: this.url.hostname,
          port: this.url.port || (secure ? 443 : 80),
          method: req.method,
          path: req.path,
          headers: { ...req.headers, ...(req.body !== undefined ? { 'content-length': String(req.body.length) } : {}) },
          agent: this.agent,
          signal: req.signal,
        },
        (res) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res, protocol: 'http/1.1' }),
      );
      r.once('error', (e) => reject(new ClientError('CLIENT_TRANSPORT', `${req.method} ${req.path}: ${e.message}`, { cause: e })));
      r.end(req.body);
    });
  }

  close(): void {
    this.closed = true;
    this.session?.close();
    this.session = undefined;
    this.agent.destroy();
  }
}

