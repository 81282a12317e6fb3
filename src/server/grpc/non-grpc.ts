// etcd 3.4 hands every HTTP/2 connection on a plaintext client port to grpc-go, which refuses a request
// that is not gRPC (its content-type is not application/grpc, +proto, ;…) with RST_STREAM PROTOCOL_ERROR
// and keeps the connection: what `curl --http2-prior-knowledge` gets from etcd, Setpoint answers too.
import type { IncomingHttpHeaders } from 'node:http2';
import { E_PROTOCOL } from '../http2/frames.js';
import type { ServerStream, StreamHandler } from '../http2/server-connection.js';

const BASE = 'application/grpc';

/** grpc-go's validContentType. */
export function isGrpcContentType(v: string | string[] | undefined): boolean {
  if (typeof v !== 'string' || !v.startsWith(BASE)) return false;
  return v.length === BASE.length || v[BASE.length] === '+' || v[BASE.length] === ';';
}

const REFUSED: StreamHandler = { data() {}, end() {}, reset() {} };

/** Resets a request that is not gRPC and returns the handler that ignores the rest of it; undefined for gRPC. */
export function refuseNonGrpc(stream: ServerStream, request: IncomingHttpHeaders): StreamHandler | undefined {
  if (isGrpcContentType(request['content-type'])) return undefined;
  stream.reset(E_PROTOCOL);
  return REFUSED;
}
