// A kubeconfig for one user of one API server, as kubectl, client-go and @kubernetes/client-node read
// it: the cluster CA and the user's client certificate (or a bearer token) inline, so the file alone is
// enough. `setpoint up` writes the admin one (a system:masters certificate from the cluster CA).
import { stringify } from 'yaml';

export interface KubeconfigSpec {
  /** `https://127.0.0.1:6443`. */
  readonly server: string;
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
  const cluster = spec.clusterName ?? 'setpoint';
  const user: Record<string, string> = {};
  if (spec.clientCertPem !== undefined) user['client-certificate-data'] = b64(spec.clientCertPem);
  if (spec.clientKeyPem !== undefined) user['client-key-data'] = b64(spec.clientKeyPem);
  if (spec.token !== undefined) user.token = spec.token;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: spec.server, 'certificate-authority-data': b64(spec.caPem) } }],
    users: [{ name: spec.userName, user }],
    contexts: [{ name: cluster, context: { cluster, user: spec.userName } }],
    'current-context': cluster,
  });
}
