// ApiResponse over Node's HTTP/1.1 and HTTP/2 responses: JSON objects and Statuses with the headers
// kube-apiserver sends (Cache-Control: no-cache, private; Audit-Id; Retry-After from a Status), plain
// text for health checks, and streams — watch events one JSON document and a newline each, flushed as
// written (chunked on HTTP/1.1, DATA frames on HTTP/2) and paced by the client's reading. Once the shell
// has answered for a handler (a timeout), the handler's later writes go nowhere.
import type { ApiResponse, ResponseStream, WatchEventFrame, WatchStream } from '../handler.js';
import { statusFromStorageError, type StorageErrorContext } from '../storage-status.js';
import { StorageError } from '../storage/interface.js';
import { statusOf, type Status } from '../status.js';
import { announcesBody, isHttp2, type NodeRequest, type NodeResponse } from './node-http.js';

export interface ResponseWriterOptions {
  readonly auditId: string;
  /** A stream write that waits this long for the client to read is given up, and the stream closed. */
  readonly stallTimeoutMs: number;
  /** Whether the request body was read to its end (else the connection cannot be reused). */
  readonly bodyConsumed: () => boolean;
  /**
   * Called, synchronously, when the response closes under a stream (the client left, stalled or the
   * connection broke): a producer looping on resolved writes must learn of it before it next yields.
   */
  readonly onClosed?: (reason: Error) => void;
}

export class ResponseWriter implements ApiResponse {
  private detached = false;
  /** How a StorageError thrown by the handler is named (its resource, name and operation). */
  storageContext: StorageErrorContext | undefined;
  /** Made when a stream starts: most responses are one body and need none. */
  private streamAbort: AbortController | undefined;
  private isClosed = false;

  constructor(
    private readonly req: NodeRequest,
    private readonly res: NodeResponse,
    private readonly opts: ResponseWriterOptions,
  ) {
    res.setHeader('Audit-Id', opts.auditId);
    res.setHeader('Cache-Control', 'no-cache, private');
    res.on('close', () => this.closed(new Error('the response closed')));
  }

  private closed(reason: Error): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.streamAbort?.abort(reason);
    this.opts.onClosed?.(reason);
  }

  get sent(): boolean {
    return this.detached || this.res.headersSent;
  }

  /** True once the response has ended or its connection closed. */
  get done(): boolean {
    return this.res.writableEnded || this.res.destroyed;
  }

  /** The shell has answered for the handler: the handler's writes from now on are dropped. */
  detach(): void {
    this.detached = true;
  }

  setHeader(name: string, value: string): void {
    if (!this.sent) this.res.setHeader(name, value);
  }

  object(code: number, body: unknown, contentType = 'application/json'): void {
    // Go's JSON encoder ends a document with a newline; clients that compare bytes see the same.
    this.raw(code, contentType, JSON.stringify(body) + '\n');
  }

  status(status: Status): void {
    const retry = status.details?.retryAfterSeconds;
    if (retry !== undefined && retry > 0) this.setHeader('Retry-After', String(retry));
    this.object(status.code, status);
  }

  error(err: unknown, ctx?: StorageErrorContext): void {
    const c = ctx ?? this.storageContext;
    this.status(err instanceof StorageError && c !== undefined ? statusFromStorageError(err, c) : statusOf(err));
  }

  /** A plain-text body as Go's http.Error and the health handlers write it. */
  text(code: number, body: string, extra: Record<string, string> = {}): void {
    for (const [k, v] of Object.entries(extra)) this.setHeader(k, v);
    this.raw(code, 'text/plain; charset=utf-8', body);
  }

  /** A body with its content type as given. */
  raw(code: number, contentType: string, body: string | Buffer): void {
    if (this.sent || this.done) return;
    const res = this.res;
    res.setHeader('Content-Type', contentType);
    res.setHeader('Content-Length', String(Buffer.byteLength(body)));
    this.closeUnreadBody();
    res.writeHead(code);
    if (this.req.method === 'HEAD') res.end();
    else res.end(body);
  }

  watch(contentType = 'application/json'): WatchStream {
    const s = this.stream(200, contentType);
    return {
      send: (event: WatchEventFrame) => s.write(JSON.stringify(event) + '\n'),
      end: () => s.end(),
      signal: s.signal,
    };
  }

  stream(code: number, contentType: string): ResponseStream {
    const res = this.res;
    this.streamAbort ??= new AbortController();
    if (this.isClosed) this.streamAbort.abort(new Error('the response closed'));
    const streamAbort = this.streamAbort;
    const signal = streamAbort.signal;
    if (!this.sent && !this.done) {
      res.setHeader('Content-Type', contentType);
      this.closeUnreadBody();
      res.writeHead(code);
      // Send the status line now: a watch with nothing to say yet must still look alive to its client.
      (res as { flushHeaders(): void }).flushHeaders();
    } else {
      streamAbort.abort(new Error('the response was already sent'));
    }
    const stallTimeoutMs = this.opts.stallTimeoutMs;
    const close = (): void => {
      this.closed(new Error(`the client read nothing for ${stallTimeoutMs} ms`));
      if (!res.destroyed) res.destroy();
    };
    return {
      signal,
      write: (chunk) =>
        new Promise<void>((resolve) => {
          if (signal.aborted || this.detached || this.done) {
            if (this.done) this.closed(new Error('the response closed'));
            resolve();
            return;
          }
          // Either signature: ServerResponse and Http2ServerResponse both take a chunk and report room.
          if ((res as { write(c: string | Uint8Array): boolean }).write(chunk)) {
            resolve();
            return;
          }
          // Buffered past the high-water mark: wait for the client, but not forever.
          const timer = setTimeout(() => {
            cleanup();
            close();
            resolve();
          }, stallTimeoutMs);
          const onDrain = (): void => {
            cleanup();
            resolve();
          };
          const onAbort = (): void => {
            cleanup();
            resolve();
          };
          const cleanup = (): void => {
            clearTimeout(timer);
            res.off('drain', onDrain);
            signal.removeEventListener('abort', onAbort);
          };
          res.on('drain', onDrain);
          signal.addEventListener('abort', onAbort, { once: true });
        }),
      end: () => {
        if (!this.done) res.end();
      },
    };
  }

  /**
   * Ends the response now (a watch at its timeout, the server stopping): a started stream is ended
   * cleanly, an unanswered request is left for the caller to answer.
   */
  endStream(): void {
    if (this.res.headersSent && !this.done) this.res.end();
  }

  /**
   * A body the handler never read must not be read afterwards: HTTP/1.1 would drain it to reuse the
   * connection (any length a client cares to send), so the connection closes after this response;
   * HTTP/2 resets the stream's upload once the response is out.
   */
  private closeUnreadBody(): void {
    const req = this.req;
    if (!announcesBody(req) || this.opts.bodyConsumed()) return;
    if (isHttp2(req)) {
      if (req.stream.readableEnded || req.complete) return;
      this.res.once('finish', () => {
        if (!req.stream.closed && !req.stream.destroyed) req.stream.close();
      });
      return;
    }
    if (req.complete) return;
    this.res.setHeader('Connection', 'close');
  }
}
