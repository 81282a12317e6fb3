// What a gRPC server puts in its headers and trailers: a call's status, the fields an OK answer carries
// (etcd's, which are grpc-go's), and those grpc-js answers a refusal with.
import { constants as h2 } from 'node:http2';
import type { StatusObject } from '@grpc/grpc-js';
import { OkBlocks } from '../http2/hpack.js';

/** A call's status on the wire: its code and message. */
export type WireStatus = Pick<StatusObject, 'code' | 'details'>;

/** grpc-js's status and content type, with which a refusal is answered (a trailers-only response). */
export const STATUS_AND_TYPE = {
  [h2.HTTP2_HEADER_STATUS]: h2.HTTP_STATUS_OK,
  [h2.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc+proto',
};

const CONTENT_TYPE = ['content-type', 'application/grpc'] as const;
const GRPC_STATUS_OK = ['grpc-status', '0'] as const;

/**
 * An OK answer's headers and trailers as etcd's server (grpc-go) sends them: no encoding headers and no
 * grpc-message. grpc-js adds three more fields, which every client then decodes and looks at per call.
 */
export const RESPONSE_HEADERS = { [h2.HTTP2_HEADER_STATUS]: h2.HTTP_STATUS_OK, [CONTENT_TYPE[0]]: CONTENT_TYPE[1] };
export const OK_TRAILERS = { [GRPC_STATUS_OK[0]]: GRPC_STATUS_OK[1] };
/** The same two blocks for the client port's own HTTP/2 server, sent by index once in the client's table. */
export const GRPC_OK_BLOCKS = new OkBlocks(CONTENT_TYPE, GRPC_STATUS_OK);

/** A status as grpc-js's server sends it, in trailers or a trailers-only response. */
export function statusTrailers(s: WireStatus): Record<string, string> {
  return { 'grpc-status': String(s.code), 'grpc-message': encodeURI(s.details) };
}
