// A kubeconfig for one user of one API server, as kubectl, client-go and @kubernetes/client-node read
// it: the cluster CA and the user's client certificate (or a bearer token) inline, so the file alone is
// enough. `setpoint up` writes the admin one (a system:masters certificate from the cluster CA).
import { stringify } from 'yaml';
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
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

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
    clusters: servers.map((server, i) => ({ name: names[i], cluster: { server, 'certificate-authority-data': b64(spec.caPem) } })),
    users: [{ name: spec.userName, user }],
    contexts: names.map((name) => ({ name, context: { cluster: name, user: spec.userName } })),
    'current-context': base,
  });
}

export interface ClientKubeconfigSpec extends ClientCertSpec {
  readonly server: string | readonly string[];
  readonly clusterName?: string;
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
  });
  await writeFileAtomic(path, text, 0o600);
  return pair;
}
