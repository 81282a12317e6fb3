// etcd's JSON gateway on the client port's HTTP/1.1 side: POST /v3/<service>/<call> with a JSON request,
// answered as etcd 3.4's grpc-gateway answers (json-codec.ts for the shapes; errors as
// {"error","message","code"} with grpc-gateway's HTTP status for the gRPC code). The calls run the same
// handler cores the gRPC services run (v3rpc/edge.ts), so admission, size limits and errors are one code
// path; streams (watch, lease keep-alive) read newline-delimited requests and write {"result":…} lines, the
// snapshot (server-streaming) one request and {"result":…} lines. Requests and answers are the small
// GatewayRequest/GatewayResponse shapes, so etcd's websocket proxy (ws-proxy.ts) runs the same code.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { Type } from 'protobufjs';
import type { EtcdMethod } from '../v3rpc/etcd-grpc.js';
import type { WireStatus } from '../grpc/wire-status.js';
import { materialize } from '../grpc/bidi.js';
import { GATEWAY_PREFIXES, GATEWAY_ROUTES } from './routes.js';
import type { GatewayRoute } from './routes.js';
import { JsonBodyError, encodeFromJson, jsonFromEncoded, messageType } from './json-codec.js';
import { JsonValueSplitter } from './json-stream.js';

export interface GatewayOptions {
  readonly methods: ReadonlyMap<string, EtcdMethod>;
  /** gRPC's receive limit (MaxRequestBytes + 512 KiB): a request over it is refused as grpc-go refuses it. */
  readonly maxReceiveBytes: number;
  /** Streams (watch, keep-alive) open at once on this port; more are refused with 429. */
  readonly maxStreams?: number;
  readonly logger: Logger;
}

/** What the gateway reads of a request: its headers and its body (an IncomingMessage, or a websocket's messages). */
export type GatewayRequest = Readable & { readonly headers: IncomingHttpHeaders };

/** What the gateway writes an answer to: a ServerResponse, or a websocket (gateway/ws-proxy.ts). */
export interface GatewayResponse {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  readonly headersSent: boolean;
  readonly destroyed: boolean;
  flushHeaders(): void;
  write(text: string): boolean;
  end(text?: string): unknown;
  once(event: 'drain' | 'close', f: () => void): unknown;
  on(event: 'close', f: () => void): unknown;
}

/** Serves one request to a gateway path, as a POST. */
export type GatewayServe = (req: GatewayRequest, res: GatewayResponse) => void;

export interface GatewayHandler {
  /** HTTP/1.1: true when the path is the gateway's and it took the request. */
  (req: IncomingMessage, res: ServerResponse): boolean;
  /** The gateway's server for a path (a 404 for an unknown one under /v3/); undefined outside the gateway. */
  forPath(path: string): GatewayServe | undefined;
  /** The largest body (or websocket message) read. */
  readonly bodyLimit: number;
}

const DEFAULT_MAX_STREAMS = 10_000;
/** JSON carries bytes as base64 (4/3) and names; a body this many times the gRPC limit is refused unread. */
const JSON_EXPANSION = 3;

/** grpc-gateway v1's runtime.HTTPStatusFromCode, which etcd 3.4 uses. */
const HTTP_STATUS: readonly number[] = [200, 408, 500, 400, 504, 404, 409, 403, 429, 412, 409, 400, 501, 500, 503, 500, 401];
const HTTP_STATUS_TEXT: Readonly<Record<number, string>> = {
  200: 'OK', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 408: 'Request Timeout',
  409: 'Conflict', 412: 'Precondition Failed', 429: 'Too Many Requests', 500: 'Internal Server Error',
  501: 'Not Implemented', 503: 'Service Unavailable', 504: 'Gateway Timeout',
};

export function httpStatusOf(code: number): number {
  return HTTP_STATUS[code] ?? 500;
}

const INVALID_ARGUMENT = 3;
const RESOURCE_EXHAUSTED = 8;

/** Go's http.Error. */
function plainError(res: GatewayResponse, status: number, text: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(text + '\n');
}

/** grpc-gateway's DefaultHTTPError body; the trailer grpc-gateway adds from the gRPC trailers. */
function statusError(res: GatewayResponse, s: WireStatus): void {
  const body = JSON.stringify({ error: s.details, message: s.details, ...(s.code !== 0 ? { code: s.code } : {}) });
  res.statusCode = httpStatusOf(s.code);
  res.setHeader('Content-Type', 'application/json');
  res.end(body);
}

/** grpc-gateway v1's error chunk on a stream: written without the newline that follows each result. */
function streamErrorChunk(s: WireStatus): unknown {
  const http = httpStatusOf(s.code);
  return { error: { grpc_code: s.code, http_code: http, message: s.details, http_status: HTTP_STATUS_TEXT[http] ?? '' } };
}

/** Go's encoding/json message for a body JSON.parse refused, as near as it can be told. */
function goJsonError(text: string, e: unknown): string {
  const m = e instanceof Error ? e.message : String(e);
  if (/end of JSON input|Unterminated string/i.test(m) || text.trim() === '') return 'unexpected EOF';
  const tok = /Unexpected token '?(.)/.exec(m)?.[1] ?? /Unexpected (?:non-whitespace )?character/.exec(m)?.[0];
  return tok && tok.length === 1 ? `invalid character '${tok}' looking for beginning of value` : m;
}

/** The metadata grpc-gateway forwards: Authorization, and Grpc-Metadata-* headers without the prefix. */
function forwardedMetadata(h: IncomingHttpHeaders): IncomingHttpHeaders {
  const md: IncomingHttpHeaders = {};
  if (h.authorization !== undefined) md.authorization = h.authorization;
  for (const [k, v] of Object.entries(h)) if (k.startsWith('grpc-metadata-')) md[k.slice('grpc-metadata-'.length)] = v;
  return md;
}

/**
 * Integer literals beyond 2^53 as strings, so JSON.parse keeps them exact: clients send 64-bit ids as
 * numbers (python3-etcd3gw sends lease IDs so), and Go decodes them exactly.
 */
function quoteBigIntegers(text: string): string {
  let out = '';
  let last = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) {
      inString = true;
      continue;
    }
    if ((c >= 0x30 && c <= 0x39) || c === 0x2d) {
      let j = i + 1;
      while (j < text.length && /[0-9.eE+-]/.test(text[j] as string)) j++;
      const tok = text.slice(i, j);
      if (/^-?\d{16,}$/.test(tok)) {
        out += text.slice(last, i) + `"${tok}"`;
        last = j;
      }
      i = j - 1;
    }
  }
  return last === 0 ? text : out + text.slice(last);
}

function parseJson(text: string): unknown {
  try {
    // An empty body is an empty request (grpc-gateway lets io.EOF through).
    return text.trim() === '' ? {} : JSON.parse(quoteBigIntegers(text));
  } catch (e) {
    throw new JsonBodyError(goJsonError(text, e));
  }
}

/** The request bytes for one JSON value, refused as gRPC would refuse them. */
function requestBytes(type: Type, json: unknown, limit: number): Buffer {
  const buf = encodeFromJson(type, json);
  if (buf.length > limit) throw new SizeError(`grpc: received message larger than max (${buf.length} vs. ${limit})`);
  return buf;
}

class SizeError extends Error {}

function errorStatus(e: unknown): WireStatus | undefined {
  if (e instanceof JsonBodyError) return { code: INVALID_ARGUMENT, details: e.message };
  if (e instanceof SizeError) return { code: RESOURCE_EXHAUSTED, details: e.message };
  return undefined;
}

interface Resolved {
  readonly route: GatewayRoute;
  readonly method: EtcdMethod;
  readonly reqType: Type;
  readonly resType: Type;
}

export function createGateway(opts: GatewayOptions): GatewayHandler {
  const log = opts.logger.child({ component: 'gateway' });
  const maxStreams = opts.maxStreams ?? DEFAULT_MAX_STREAMS;
  const bodyLimit = opts.maxReceiveBytes * JSON_EXPANSION;
  let openStreams = 0;
  const resolved = new Map<string, Resolved>();
  for (const [path, route] of GATEWAY_ROUTES) {
    const method = opts.methods.get(`${route.service}/${route.method}`);
    if (!method || !(route.stream === 'bidi' ? method.bidi : route.stream === 'server' ? method.serverStream : method.unary)) throw new Error(`gateway: no handler for ${route.service}.${route.method}`);
    resolved.set(path, {
      route,
      method,
      reqType: messageType(`etcdserverpb.${route.request}`),
      resType: messageType(`etcdserverpb.${route.response}`),
    });
  }

  const toJson = (r: Resolved, res: unknown): Record<string, unknown> => {
    const buf = Buffer.isBuffer(res) ? res : r.method.serialize(res);
    return jsonFromEncoded(r.resType, buf);
  };

  /**
   * Reads the body's first JSON value and decodes it, as grpc-gateway's decoder does (what follows it is not
   * read; an empty body is an empty request); a body that does not decode is answered here.
   */
  const readRequest = (r: Resolved, req: GatewayRequest, res: GatewayResponse, then: (call: unknown) => void): void => {
    const splitter = new JsonValueSplitter();
    let done = false;
    const decode = (text: string): void => {
      done = true;
      req.resume();
      let call: unknown;
      try {
        call = r.method.deserialize(requestBytes(r.reqType, parseJson(text), opts.maxReceiveBytes));
      } catch (e) {
        const s = errorStatus(e);
        if (!s) throw e;
        return statusError(res, s);
      }
      then(call);
    };
    req.setEncoding('utf8');
    // What follows the value is read and dropped, up to the same bound; past it the connection goes.
    let after = 0;
    req.on('data', (c: string) => {
      if (done) {
        after += c.length;
        if (after > bodyLimit) req.destroy();
        return;
      }
      const [first] = splitter.push(c);
      if (first !== undefined) return decode(first);
      if (splitter.pending > bodyLimit) {
        done = true;
        res.setHeader('Connection', 'close');
        statusError(res, { code: RESOURCE_EXHAUSTED, details: `grpc: received message larger than max (${splitter.pending} vs. ${opts.maxReceiveBytes})` });
        req.destroy();
      }
    });
    req.on('end', () => {
      if (!done) decode(splitter.rest());
    });
  };

  const serveUnary = (r: Resolved, req: GatewayRequest, res: GatewayResponse): void => {
    const core = r.method.unary;
    if (!core) return;
    readRequest(r, req, res, (call) => {
      const t = core.track();
      t.received();
      core.run(call, forwardedMetadata(req.headers)).then(
        (out) => {
          t.sent();
          t.done(0);
          const body = JSON.stringify(toJson(r, out));
          res.statusCode = 200;
          res.setHeader('Content-Type', 'application/json');
          res.setHeader('Grpc-Metadata-Content-Type', 'application/grpc');
          res.end(body);
        },
        (e: unknown) => {
          const s = core.toStatus(e);
          t.done(s.code);
          statusError(res, s);
        },
      );
    });
  };

  /**
   * A server stream (Snapshot): one request, then a `{"result":…}` line per response, each written when the
   * client has taken the one before. An error before the first response sets the HTTP status, as
   * grpc-gateway's headers are not out yet then.
   */
  const serveServerStream = (r: Resolved, req: GatewayRequest, res: GatewayResponse): void => {
    const core = r.method.serverStream;
    if (!core) return;
    readRequest(r, req, res, (request) => {
      if (res.destroyed) return;
      let ended = false;
      const call = core.open(
        request,
        {
          write: (msg) => {
            if (ended) return true;
            if (!res.headersSent) {
              res.statusCode = 200;
              res.setHeader('Content-Type', 'application/json');
              res.setHeader('Grpc-Metadata-Content-Type', 'application/grpc');
            }
            return res.write(JSON.stringify({ result: toJson(r, msg) }) + '\n');
          },
          onRoom: (f) => void res.once('drain', f),
          end: (s) => {
            if (ended) return;
            ended = true;
            if (s.code !== 0) {
              if (!res.headersSent) {
                res.statusCode = httpStatusOf(s.code);
                res.setHeader('Content-Type', 'application/json');
              }
              res.write(JSON.stringify(streamErrorChunk(s)));
            }
            res.end();
          },
        },
        forwardedMetadata(req.headers),
      );
      res.on('close', () => {
        if (ended) return;
        ended = true;
        call.cancel();
      });
    });
  };

  /** A bidi stream over one request and its chunked response. */
  const serveStream = (r: Resolved, req: GatewayRequest, res: GatewayResponse): void => {
    const core = r.method.bidi;
    if (!core) return;
    if (openStreams >= maxStreams) {
      statusError(res, { code: RESOURCE_EXHAUSTED, details: `gateway: too many open streams (${maxStreams})` });
      req.resume();
      return;
    }
    openStreams++;
    let ended = false;
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Grpc-Metadata-Content-Type', 'application/grpc');
    res.flushHeaders();
    const line = (obj: unknown): boolean => res.write(JSON.stringify(obj) + '\n');
    const finish = (): void => {
      if (ended) return;
      ended = true;
      openStreams--;
    };
    // Set before any response is written: the handler starts after admission, a promise later.
    const room = (): void => call.room();
    const call = core.open(
      {
        write: (msg) => {
          if (ended) return true;
          const ok = line({ result: toJson(r, msg) });
          if (!ok) res.once('drain', room);
          return ok;
        },
        writeEncoded: (m) => {
          if (ended) return true;
          const ok = line({ result: jsonFromEncoded(r.resType, materialize(m)) });
          if (!ok) res.once('drain', room);
          return ok;
        },
        end: (s) => {
          if (ended) return;
          // grpc-gateway v1's stream error chunk.
          if (s.code !== 0) res.write(JSON.stringify(streamErrorChunk(s)));
          finish();
          res.end();
        },
      },
      forwardedMetadata(req.headers),
    );
    const splitter = new JsonValueSplitter();
    let closedSend = false;
    // As grpc-gateway: the first request that does not decode ends the client's side of the stream.
    const closeSend = (): void => {
      if (closedSend) return;
      closedSend = true;
      call.halfClose();
    };
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      if (closedSend) return;
      for (const text of splitter.push(chunk)) {
        try {
          call.request(r.method.deserialize(requestBytes(r.reqType, parseJson(text), opts.maxReceiveBytes)));
        } catch (e) {
          if (!errorStatus(e)) throw e;
          log.debug({ err: (e as Error).message }, 'stream request refused; closing the send side');
          return closeSend();
        }
      }
      if (splitter.pending > bodyLimit) closeSend();
    });
    req.on('end', closeSend);
    // The client went away: the call is cancelled (its watchers and keep-alives are released).
    res.on('close', () => {
      if (ended) return;
      finish();
      call.cancel();
    });
  };

  const dispatch = (r: Resolved, req: GatewayRequest, res: GatewayResponse): void => {
    if (r.route.stream === 'bidi') serveStream(r, req, res);
    else if (r.route.stream === 'server') serveServerStream(r, req, res);
    else serveUnary(r, req, res);
  };
  const notFound: GatewayServe = (req, res) => {
    req.resume();
    plainError(res, 404, 'Not Found');
  };
  const forPath = (path: string): GatewayServe | undefined => {
    const prefix = GATEWAY_PREFIXES.find((p) => path.startsWith(p + '/'));
    if (!prefix) return undefined;
    const r = resolved.get(path.slice(prefix.length));
    return r ? (req, res) => dispatch(r, req, res) : notFound;
  };
  const handler = (req: IncomingMessage, res: ServerResponse): boolean => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const serve = forPath(path);
    if (!serve) return false;
    if (serve !== notFound && req.method !== 'POST') {
      plainError(res, 405, 'Method Not Allowed');
      return true;
    }
    serve(req, res);
    return true;
  };
  return Object.assign(handler, { forPath, bodyLimit });
}
