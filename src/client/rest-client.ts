// The REST client under every typed helper: JSON in and out, errors parsed into ApiStatusError, a
// deadline per request, bounded response bodies, and retries only where they are safe (a GET whose
// connection failed before any answer). With several API servers (endpoints.ts) it fails over between
// them, and a watch whose connection breaks resumes on the next one from the last resourceVersion it
// delivered. Derived clients share one transport and add headers to their writes (the leader elector's
// fencing token).
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import { ApiStatusError, ClientError, statusFromResponse } from './api-status-error.js';
import { endpointList, Endpoints, type Sent } from './endpoints.js';
import { isConnectionError, type Protocol, type RawResponse, type TlsOptions } from './transport.js';
import { WatchDecoder, type WatchEvent } from './watch-decoder.js';

export interface RestClientConfig {
  /** `https://host:port` (or http:// for a plain server). */
  readonly server: string;
  /** More API servers of the same cluster to fail over to, in order (the kubeconfig's `setpoint.io/endpoints`). */
  readonly endpoints?: readonly string[];
  /** Where a switch between endpoints is logged. */
  readonly log?: Logger;
  readonly tls?: TlsOptions;
  readonly token?: string;
  readonly protocol?: Protocol;
  readonly userAgent?: string;
  /** Per request (not watches); default 30 s. */
  readonly timeoutMs?: number;
  /** Largest response body read; default 256 MiB (a LIST of 10,000 pods is ~30 MiB of JSON). */
  readonly maxResponseBytes?: number;
  /** Attempts for a GET whose connection failed; default 3. */
  readonly getAttempts?: number;
}

export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

export interface RequestOptions {
  readonly method?: string;
  readonly path: string;
  readonly query?: Query;
  /** JSON-encoded unless a string or Buffer. */
  readonly body?: unknown;
  readonly contentType?: string;
  readonly accept?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

export interface BufferedResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}

type HeaderSource = () => Readonly<Record<string, string>>;

export function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s === '' ? path : `${path}${path.includes('?') ? '&' : '?'}${s}`;
}

export class RestClient {
  private readonly transport: Endpoints;
  private readonly config: RestClientConfig;
  private readonly writeHeaders: readonly HeaderSource[];

  constructor(config: RestClientConfig, shared?: { transport: Endpoints; writeHeaders: readonly HeaderSource[] }) {
    this.config = config;
    this.transport = shared?.transport ?? new Endpoints(endpointList(config.server, config.endpoints), config.tls ?? {}, config.protocol ?? 'auto', config.log);
    this.writeHeaders = shared?.writeHeaders ?? [];
  }

  /** The API server in use. */
  get server(): string {
    return this.transport.server;
  }

  /** A client on the same connection whose writes (every method but GET) also carry these headers. */
  withWriteHeaders(source: HeaderSource): RestClient {
    return new RestClient(this.config, { transport: this.transport, writeHeaders: [...this.writeHeaders, source] });
  }

  close(): void {
    this.transport.close();
  }

  private headersFor(method: string, o: RequestOptions, body: Buffer | undefined): Record<string, string> {
    const h: Record<string, string> = {
      accept: o.accept ?? 'application/json',
      'user-agent': this.config.userAgent ?? 'setpoint/v0.1.0',
    };
    if (this.config.token !== undefined) h.authorization = `Bearer ${this.config.token}`;
    if (body !== undefined) h['content-type'] = o.contentType ?? 'application/json';
    if (method !== 'GET') for (const src of this.writeHeaders) Object.assign(h, src());
    return { ...h, ...o.headers };
  }

  private encode(body: unknown): Buffer | undefined {
    if (body === undefined) return undefined;
    if (Buffer.isBuffer(body)) return body;
    if (typeof body === 'string') return Buffer.from(body);
    return Buffer.from(JSON.stringify(body));
  }

  /** One round trip, body read in full (bounded) under the request's deadline. */
  async raw(o: RequestOptions): Promise<BufferedResponse> {
    const method = o.method ?? 'GET';
    const attempts = method === 'GET' ? (this.config.getAttempts ?? 3) : 1;
    for (let i = 1; ; i++) {
      try {
        return await this.once(method, o);
      } catch (e) {
        if (i >= attempts || !isConnectionError(e) || o.signal?.aborted) throw e;
        await delay(50 * 2 ** i);
      }
    }
  }

  private async once(method: string, o: RequestOptions): Promise<BufferedResponse> {
    const timeoutMs = o.timeoutMs ?? this.config.timeoutMs ?? 30_000;
    const ac = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ac.abort();
    }, timeoutMs);
    const onAbort = (): void => ac.abort();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    const body = this.encode(o.body);
    try {
      const req = { method, path: withQuery(o.path, o.query), headers: this.headersFor(method, o, body), ...(body ? { body } : {}), signal: ac.signal };
      const { response: res } = await this.transport.send(req, { idempotent: method === 'GET', timedOut: () => timedOut });
      return { status: res.status, headers: res.headers, body: await this.readBounded(res) };
    } catch (e) {
      if (timedOut) throw new ClientError('CLIENT_TIMEOUT', `${method} ${o.path}: no answer within ${timeoutMs} ms`, { cause: e });
      throw e;
    } finally {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
    }
  }

  private async readBounded(res: RawResponse): Promise<Buffer> {
    const max = this.config.maxResponseBytes ?? 256 * 1024 * 1024;
    const declared = Number(res.headers['content-length'] ?? NaN);
    if (declared > max) {
      res.body.destroy();
      throw new ClientError('CLIENT_TOO_LARGE', `response of ${declared} bytes is over the limit of ${max}`);
    }
    const parts: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > max) {
          res.body.destroy();
          throw new ClientError('CLIENT_TOO_LARGE', `response is over the limit of ${max} bytes`);
        }
        parts.push(chunk);
      }
    } catch (e) {
      if (e instanceof ClientError) throw e;
      throw new ClientError('CLIENT_TRANSPORT', `reading the response: ${(e as Error).message}`, { cause: e });
    }
    return Buffer.concat(parts);
  }

  /** A JSON call: the parsed body on 2xx, an ApiStatusError otherwise. */
  async request<T = unknown>(o: RequestOptions): Promise<T> {
    const r = await this.raw(o);
    if (r.status < 200 || r.status >= 300) throw new ApiStatusError(statusFromResponse(r.status, r.body));
    if (r.body.length === 0) return undefined as T;
    try {
      return JSON.parse(r.body.toString('utf8')) as T;
    } catch (e) {
      throw new ClientError('CLIENT_BAD_RESPONSE', `${o.method ?? 'GET'} ${o.path}: the response is not JSON: ${(e as Error).message}`);
    }
  }

  /**
   * A watch: events until the server ends the stream or the signal aborts. A non-200 answer is an
   * ApiStatusError (HTTP 410 included); an ERROR event is yielded for the caller to judge. With several
   * endpoints, a stream whose connection breaks is opened again on the next one from the last
   * resourceVersion delivered (a 410 there is the caller's, as on any watch).
   */
  async *watch<T = unknown>(o: RequestOptions & { signal: AbortSignal }): AsyncGenerator<WatchEvent<T>> {
    let rv = o.query?.resourceVersion;
    // Breaks in a row with no event between them: past one per endpoint, the error is the caller's.
    let breaks = 0;
    for (;;) {
      const opened = await this.openWatch({ ...o, query: { ...o.query, resourceVersion: rv } });
      if (opened === undefined) return;
      const { response: res, endpoint } = opened;
      if (res.status !== 200) {
        throw new ApiStatusError(statusFromResponse(res.status, await this.readBounded(res)));
      }
      const decoder = new WatchDecoder();
      try {
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          for (const ev of decoder.push(chunk)) {
            const evRv = ev.type !== 'ERROR' ? (ev.object as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion : undefined;
            if (typeof evRv === 'string' && evRv !== '') rv = evRv;
            breaks = 0;
            yield ev as WatchEvent<T>;
          }
        }
        // A server that dies closes an HTTP/2 stream without an error: the stream never ended, so resume.
        if (res.body.readableAborted && !o.signal.aborted && this.transport.count > 1) {
          throw new ClientError('CLIENT_TRANSPORT', `watch ${o.path}: the connection closed before the stream ended`);
        }
        for (const ev of decoder.end()) yield ev as WatchEvent<T>;
        return;
      } catch (e) {
        if (o.signal.aborted) return;
        if (e instanceof ClientError && e.code !== 'CLIENT_TRANSPORT') throw e;
        const err = e instanceof ClientError ? e : new ClientError('CLIENT_TRANSPORT', `watch ${o.path}: ${(e as Error).message}`, { cause: e });
        this.transport.failed(endpoint, err);
        if (this.transport.count < 2 || ++breaks > this.transport.count) throw err;
      } finally {
        res.body.destroy();
      }
    }
  }

  /** Opens a watch stream (retrying connection errors as a GET); undefined once the signal aborts. */
  private async openWatch(o: RequestOptions & { signal: AbortSignal }): Promise<Sent | undefined> {
    const headers = this.headersFor('GET', o, undefined);
    for (let i = 1; ; i++) {
      try {
        return await this.transport.send({ method: 'GET', path: withQuery(o.path, { ...o.query, watch: 'true' }), headers, signal: o.signal }, { idempotent: true });
      } catch (e) {
        if (o.signal.aborted) return undefined;
        if (i >= (this.config.getAttempts ?? 3) || !isConnectionError(e)) throw e;
        await delay(50 * 2 ** i);
      }
    }
  }
}
