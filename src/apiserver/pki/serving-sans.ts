// The names a serving certificate the API server makes for itself covers: every way a client on this
// host or off it may dial it (loopback, the host name, the addresses it binds and advertises, and the
// in-cluster names Kubernetes' own certificate carries).
import { hostname } from 'node:os';

export function servingSans(addresses: { readonly bindAddress: string; readonly advertiseAddress?: string }): string[] {
  const sans = ['localhost', '127.0.0.1', '::1', hostname(), 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'];
  if (addresses.advertiseAddress !== undefined) sans.push(addresses.advertiseAddress);
  if (addresses.bindAddress !== '0.0.0.0' && addresses.bindAddress !== '::') sans.push(addresses.bindAddress);
  return [...new Set(sans)];
}
