// The seam between the API server's shell and the registry: a resource request arrives here already
// authenticated, parsed into Kubernetes' RequestInfo, matched to its descriptor, admitted by the
// in-flight limits and under its deadline; the handler answers through ApiResponse (an object, a Status,
// or a stream of watch events). Everything HTTP — both protocols, bounds, timeouts, metrics — stays
// on the shell's side.
import type { Logger } from 'pino';
import type { UserInfo } from './authn/user-info.js';
import type { MediaRange } from './media-type.js';
import type { RequestInfo } from './request-info.js';
import type { ResourceDescriptor, SubresourceDescriptor } from './resource-registry.js';
import type { Status } from './status.js';
import type { StorageErrorContext } from './storage-status.js';

export interface ApiRequest {
  /** Parsed as Kubernetes parses it; `isResourceRequest` is true and the verb is one the descriptor allows. */
  readonly info: RequestInfo;
  readonly resource: ResourceDescriptor;
  /** Set when the path names a subresource (`/status`, `/scale`). */
  readonly subresource?: SubresourceDescriptor;
  readonly user: UserInfo;
  /** The HTTP method, upper-case. */
  readonly method: string;
  readonly query: URLSearchParams;
  /** Request headers, names lower-case, repeated headers joined with ', '. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body's media type without parameters (`application/merge-patch+json`), if any. */
  readonly contentType?: string;
  readonly accept: readonly MediaRange[];
  /** The offer the client's Accept prefers, or undefined (answer statuses.notAcceptable). */
  negotiate(offers: readonly string[]): string | undefined;
  /**
   * The whole body, read once and kept. Bounded: more than --max-request-body-bytes rejects with 413
   * (`Request entity too large: limit is N`), a body that stalls or outlasts the deadline with 504.
   */
  body(): Promise<Buffer>;
  /**
   * Aborted when the answer is no longer wanted: the client went away, the request's deadline passed
   * (the shell has answered 504), a watch reached its timeout, or the server is stopping. A write already
   * sent to the store may still land, as in Kubernetes.
   */
  readonly signal: AbortSignal;
  /** When a non-long-running request must have answered (epoch ms); undefined for watches and streams. */
  readonly deadline?: number;
  /** A watch's length, chosen as Kubernetes chooses it (timeoutSeconds, else --min-request-timeout × [1, 2)). */
  readonly watchTimeoutMs?: number;
  readonly log: Logger;
}

export interface WatchEventFrame {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: unknown;
}

/** A streamed body. Writes after the stream closed are dropped; watch `signal` to stop producing. */
export interface ResponseStream {
  /** Resolves once the connection has room for more (the client reads), so a slow reader slows the writer. */
  write(chunk: string | Uint8Array): Promise<void>;
  end(): void;
  readonly signal: AbortSignal;
}

/** A watch response: 200, one JSON event and a newline per frame (chunked on HTTP/1.1, DATA frames on HTTP/2). */
export interface WatchStream {
  send(event: WatchEventFrame): Promise<void>;
  end(): void;
  readonly signal: AbortSignal;
}

export interface ApiResponse {
  setHeader(name: string, value: string): void;
  /** A JSON body (`application/json` unless told otherwise). */
  object(code: number, body: unknown, contentType?: string): void;
  /** A Status, with Retry-After from details.retryAfterSeconds as Kubernetes sets it. */
  status(status: Status): void;
  /** Whatever was thrown: a StatusError as its Status, a StorageError mapped (with ctx), anything else 500. */
  error(err: unknown, ctx?: StorageErrorContext): void;
  /** Starts a watch response (`application/json` unless told otherwise: a Table watch says so). */
  watch(contentType?: string): WatchStream;
  /** Starts any other streamed body (pods/log with follow=true). */
  stream(code: number, contentType: string): ResponseStream;
  /** True once a status line has gone out (or the shell answered for the handler). */
  readonly sent: boolean;
}

/**
 * What the registry implements, one per resource (or one shared by all). The returned promise spans the
 * whole request: when it settles the shell ends whatever the handler left open, and answers 500 if it
 * answered nothing. A thrown error is answered as ApiResponse.error would.
 */
export interface ResourceHandler {
  serve(req: ApiRequest, res: ApiResponse): Promise<void>;
}
