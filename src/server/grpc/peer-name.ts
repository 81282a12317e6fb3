// The common name of a call's verified client certificate, as etcd 3.4 takes it for the user when auth is
// on, --client-cert-auth is set and the call has no token (AuthInfoFromTLS). The client port's TLS ends
// before the HTTP/2 server, so the connection's name travels with each call's request headers: as a
// symbol property for the calls served on the port's own cores (no client can send a symbol), and as one
// header for the calls relayed to grpc-js, which the front sets itself after dropping whatever a client
// sent under that name. Calls that carry grpc-gateway's Grpcgateway-Accept metadata get no name, as in
// etcd (its JSON gateway dials the server with the server's own certificate).
import type { IncomingHttpHeaders } from 'node:http2';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';

/** The header a relayed call carries the name in (URI-encoded: a CN may hold any character). */
export const PEER_NAME_HEADER = 'setpoint-client-cert-cn';
const PEER_NAME = Symbol('client certificate common name');

/**
 * The subject CN of the certificate a TLS client presented and the port verified, '' for one without a
 * CN (etcd still takes it: a user '' that no check lets through); undefined for plaintext or no
 * certificate. With several CNs, the last one, as Go's pkix.Name keeps it.
 */
export function verifiedPeerName(sock: Socket): string | undefined {
  if (!(sock instanceof TLSSocket) || !sock.authorized) return undefined;
  const cert = sock.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return undefined;
  const cn: unknown = cert.subject?.CN;
  if (Array.isArray(cn)) return String(cn[cn.length - 1] ?? '');
  return typeof cn === 'string' ? cn : '';
}

/** Marks one call's request headers with its connection's name (undefined: none), before it is dispatched. */
export function markPeerName(request: IncomingHttpHeaders, name: string | undefined): void {
  delete request[PEER_NAME_HEADER];
  if (name === undefined || request['grpcgateway-accept'] !== undefined) return;
  request[PEER_NAME_HEADER] = encodeURIComponent(name);
  (request as Record<symbol, unknown>)[PEER_NAME] = name;
}

/** The name marked on request headers handed to a call's core (gateway calls never have one). */
export function peerNameOfHeaders(request: IncomingHttpHeaders): string | undefined {
  const v = (request as Record<symbol, unknown>)[PEER_NAME];
  return typeof v === 'string' ? v : undefined;
}

/** The name a relayed call's header carries, set by the front (grpc-js serves only the front's connections). */
export function peerNameOfHeader(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}
