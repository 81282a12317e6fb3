// The client certificate a TLS connection presented, read once per connection (it cannot change over
// the connection's life) and kept with it, so authenticating each request costs a lookup.
import type { TLSSocket } from 'node:tls';
import type { PresentedCertificate } from '../authn/authenticator.js';

const cache = new WeakMap<TLSSocket, PresentedCertificate | null>();

function values(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

export function peerCertificate(socket: TLSSocket): PresentedCertificate | undefined {
  const hit = cache.get(socket);
  if (hit !== undefined) return hit ?? undefined;
  const cert = socket.getPeerCertificate();
  let out: PresentedCertificate | null = null;
  // No certificate: getPeerCertificate answers an empty object.
  if (cert !== null && typeof cert === 'object' && cert.subject !== undefined) {
    const err = socket.authorizationError as Error | string | null | undefined;
    out = {
      authorized: socket.authorized,
      ...(err ? { error: typeof err === 'string' ? err : (err.message ?? String(err)) } : {}),
      commonName: values(cert.subject.CN)[0] ?? '',
      organizations: values(cert.subject.O),
    };
  }
  cache.set(socket, out);
  return out ?? undefined;
}
