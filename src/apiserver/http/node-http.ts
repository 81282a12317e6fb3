// The two request/response pairs Node hands the API server — HTTP/1.1 (node:http's) and HTTP/2 (the
// compatibility API's) — and the few facts about them the shell needs, read the same way for both.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { TLSSocket } from 'node:tls';

export type NodeRequest = IncomingMessage | Http2ServerRequest;
export type NodeResponse = ServerResponse | Http2ServerResponse;

export function isHttp2(req: NodeRequest): req is Http2ServerRequest {
  return 'stream' in req;
}

/** The TLS socket under the request (for HTTP/2, the session's). */
export function tlsSocketOf(req: NodeRequest): TLSSocket | undefined {
  const socket = isHttp2(req) ? req.stream.session?.socket : req.socket;
  // HTTP/2's is a proxy that forwards reads to the TLS socket; `in` would ask the session instead.
  return socket !== undefined && typeof (socket as Partial<TLSSocket>).getPeerCertificate === 'function' ? (socket as TLSSocket) : undefined;
}

/** Headers with lower-case names and repeated values joined by ', ' (HTTP/2 pseudo-headers dropped). */
export function flatHeaders(req: NodeRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (k.startsWith(':') || v === undefined) continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** Whether the request announced a body (a length above zero, or chunked framing on HTTP/1.1). */
export function announcesBody(req: NodeRequest): boolean {
  const len = req.headers['content-length'];
  if (len !== undefined && len !== '0') return true;
  if (!isHttp2(req)) return req.headers['transfer-encoding'] !== undefined;
  // HTTP/2 needs no framing header: a stream the client has not ended may still carry one.
  return !req.stream.readableEnded && !req.complete;
}
