// A kubeconfig for one user of one API server, as kubectl, client-go and @kubernetes/client-node read
// it: the cluster CA and the user's client certificate (or a bearer token) inline, so the file alone is
// enough. `setpoint up` writes the admin one (a system:masters certificate from the cluster CA). With
// `endpoints`, each cluster also lists the API servers Setpoint's clients fail over to, in the
// `setpoint.io/endpoints` extension (its own server first); kubectl ignores it.
import { stringify } from 'yaml';
import { ENDPOINTS_EXTENSION } from '../../client/kubeconfig.js';
import { writeFileAtomic } from './cert-dir.js';
import { issueClientCert, type ClientCertSpec, type KeyPair } from './certificates.js';

export interface KubeconfigSpec {
  /**
   * `https://127.0.0.1:6443`; several API servers give one cluster and context each, named `<clusterName>`,
   * `<clusterName>-2`, … (the first is the current context).
   */
  readonly server: string | readonly string[];
  readonly caPem: string;
  readonly userName: string;
  readonly clientCertPem?: string;
  readonly clientKeyPem?: string;
  readonly token?: string;
  /** Names the cluster and the context (default `setpoint`). */
  readonly clusterName?: string;
  /** Every API server of the cluster, for failover (written after each cluster's own server). */
  readonly endpoints?: readonly string[];
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

function endpointsExtension(server: string, endpoints: readonly string[] | undefined): { extensions?: unknown[] } {
  if (endpoints === undefined || endpoints.length === 0) return {};
  const servers = [server, ...endpoints.filter((e) => e !== server)];
  return { extensions: [{ name: ENDPOINTS_EXTENSION, extension: { servers } }] };
}

export function renderKubeconfig(spec: KubeconfigSpec): string {
  const base = spec.clusterName ?? 'setpoint';
  const servers = typeof spec.server === 'string' ? [spec.server] : spec.server;
  const names = servers.map((_, i) => (i === 0 ? base : `${base}-${i + 1}`));
  const user: Record<string, string> = {};
  if (spec.clientCertPem !== undefined) user['client-certificate-data'] = b64(spec.clientCertPem);
  if (spec.clientKeyPem !== undefined) user['client-key-data'] = b64(spec.clientKeyPem);
  if (spec.token !== undefined) user.token = spec.token;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: servers.map((server, i) => ({ name: names[i], cluster: { server, 'certificate-authority-data': b64(spec.caPem), ...endpointsExtension(server, spec.endpoints) } })),
    users: [{ name: spec.userName, user }],
    contexts: names.map((name) => ({ name, context: { cluster: name, user: spec.userName } })),
    'current-context': base,
  });
}

export interface ClientKubeconfigSpec extends ClientCertSpec {
  readonly server: string | readonly string[];
  readonly clusterName?: string;
  readonly endpoints?: readonly string[];
}

/** Issues a client certificate from `ca` for `spec.user` and writes a kubeconfig holding it (0600, atomically). */
export async function writeClientKubeconfig(path: string, ca: KeyPair, spec: ClientKubeconfigSpec): Promise<KeyPair> {
  const pair = await issueClientCert(ca, spec);
  const text = renderKubeconfig({
    server: spec.server,
    caPem: ca.certPem,
    userName: spec.user,
    clientCertPem: pair.certPem,
    clientKeyPem: pair.keyPem,
    ...(spec.clusterName !== undefined ? { clusterName: spec.clusterName } : {}),
    ...(spec.endpoints !== undefined ? { endpoints: spec.endpoints } : {}),
  });
  await writeFileAtomic(path, text, 0o600);
  return pair;
}
