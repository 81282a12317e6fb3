// Reading a kubeconfig as kubectl does: `--kubeconfig`, else the KUBECONFIG list (the first file that names
// a thing wins, as client-go merges), else ~/.kube/config; the current context or `--context`; the
// cluster's server and CA, the user's client certificate and key or bearer token (inline `-data`, files
// relative to the kubeconfig's folder, or `tokenFile`). A cluster may name more API servers to fail over
// to in its `setpoint.io/endpoints` extension (kubectl ignores it and uses `server`). The result is a
// RestClientConfig plus the context's namespace. Errors are readable lines (ClientError CLIENT_CONFIG),
// never stack traces.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { parse } from 'yaml';
import { ClientError } from './api-status-error.js';
import { endpointList } from './endpoints.js';
import type { RestClientConfig } from './rest-client.js';

export interface KubeconfigSelection {
  /** `--kubeconfig`: one file, used alone. */
  readonly path?: string;
  /** `--context`; default the file's current-context. */
  readonly context?: string;
  readonly env?: NodeJS.ProcessEnv;
}

export interface LoadedKubeconfig {
  readonly config: RestClientConfig;
  /** The context's namespace, or `default`. */
  readonly namespace: string;
  readonly contextName: string;
  readonly files: readonly string[];
}

interface Named<T> {
  name: string;
  value: T;
  dir: string;
}

type Entry = Record<string, unknown>;

function fail(msg: string): never {
  throw new ClientError('CLIENT_CONFIG', msg);
}

function kubeconfigFiles(sel: KubeconfigSelection): string[] {
  if (sel.path !== undefined && sel.path !== '') return [sel.path];
  const env = sel.env ?? process.env;
  const list = (env.KUBECONFIG ?? '').split(delimiter).filter((p) => p !== '');
  if (list.length > 0) return list;
  return [join(env.HOME ?? homedir(), '.kube', 'config')];
}

function readNamed(doc: Entry, field: string, inner: string, dir: string, into: Map<string, Named<Entry>>): void {
  const arr = doc[field];
  if (arr === undefined || arr === null) return;
  if (!Array.isArray(arr)) fail(`kubeconfig: ${field} is not a list`);
  for (const item of arr as unknown[]) {
    if (typeof item !== 'object' || item === null) continue;
    const name = (item as Entry).name;
    const value = (item as Entry)[inner];
    if (typeof name !== 'string' || into.has(name)) continue;
    into.set(name, { name, value: typeof value === 'object' && value !== null ? (value as Entry) : {}, dir });
  }
}

/** The name of the cluster extension that lists every API server of the cluster. */
export const ENDPOINTS_EXTENSION = 'setpoint.io/endpoints';

/** `extensions: [{name: setpoint.io/endpoints, extension: {servers: [...]}}]` of a cluster, checked as URLs. */
function extensionServers(cluster: Named<Entry>): string[] {
  const exts = cluster.value.extensions;
  if (exts === undefined || exts === null) return [];
  if (!Array.isArray(exts)) fail(`kubeconfig: cluster "${cluster.name}" extensions is not a list`);
  const ext = (exts as unknown[]).find((x): x is Entry => typeof x === 'object' && x !== null && (x as Entry).name === ENDPOINTS_EXTENSION);
  if (ext === undefined) return [];
  const servers = (typeof ext.extension === 'object' && ext.extension !== null ? (ext.extension as Entry) : {}).servers;
  if (!Array.isArray(servers)) fail(`kubeconfig: cluster "${cluster.name}" extension ${ENDPOINTS_EXTENSION} has no servers list`);
  return (servers as unknown[]).map((s) => {
    if (typeof s !== 'string' || !/^https?:\/\//.test(s)) fail(`kubeconfig: cluster "${cluster.name}" extension ${ENDPOINTS_EXTENSION}: ${JSON.stringify(s)} is not an http(s) URL`);
    return s;
  });
}

function str(e: Entry, k: string): string | undefined {
  const v = e[k];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** `<k>-data` (base64) or `<k>` (a file path, relative to the kubeconfig's folder). */
function material(e: Named<Entry>, k: string): string | undefined {
  const data = str(e.value, `${k}-data`);
  if (data !== undefined) return Buffer.from(data, 'base64').toString('utf8');
  const file = str(e.value, k);
  if (file === undefined) return undefined;
  const p = isAbsolute(file) ? file : join(e.dir, file);
  try {
    return readFileSync(p, 'utf8');
  } catch (err) {
    return fail(`kubeconfig: cannot read ${k} ${p}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

export function loadKubeconfig(sel: KubeconfigSelection = {}): LoadedKubeconfig {
  const files = kubeconfigFiles(sel);
  const clusters = new Map<string, Named<Entry>>();
  const users = new Map<string, Named<Entry>>();
  const contexts = new Map<string, Named<Entry>>();
  let current: string | undefined;
  let readAny = false;
  for (const f of files) {
    let text: string;
    try {
      text = readFileSync(f, 'utf8');
    } catch (err) {
      if (sel.path !== undefined || files.length === 1) fail(`kubeconfig: cannot read ${f}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      continue;
    }
    let doc: unknown;
    try {
      doc = parse(text);
    } catch (err) {
      fail(`kubeconfig: ${f} is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
    }
    if (doc === null || doc === undefined) continue;
    if (typeof doc !== 'object') fail(`kubeconfig: ${f} is not a kubeconfig`);
    readAny = true;
    const d = doc as Entry;
    const dir = dirname(f);
    readNamed(d, 'clusters', 'cluster', dir, clusters);
    readNamed(d, 'users', 'user', dir, users);
    readNamed(d, 'contexts', 'context', dir, contexts);
    current ??= str(d, 'current-context');
  }
  if (!readAny) fail(`kubeconfig: no configuration found (looked in ${files.join(', ')})`);
  const contextName = sel.context ?? current;
  if (contextName === undefined) fail('kubeconfig: no current-context is set; pass --context');
  const ctx = contexts.get(contextName) ?? fail(`kubeconfig: context "${contextName}" not found`);
  const clusterName = str(ctx.value, 'cluster') ?? fail(`kubeconfig: context "${contextName}" names no cluster`);
  const cluster = clusters.get(clusterName) ?? fail(`kubeconfig: cluster "${clusterName}" not found`);
  const userName = str(ctx.value, 'user');
  const user = userName !== undefined ? users.get(userName) : undefined;
  if (userName !== undefined && user === undefined) fail(`kubeconfig: user "${userName}" not found`);
  const server = str(cluster.value, 'server') ?? fail(`kubeconfig: cluster "${clusterName}" has no server`);
  if (!/^https?:\/\//.test(server)) fail(`kubeconfig: cluster "${clusterName}" server ${JSON.stringify(server)} is not an http(s) URL`);

  const ca = material(cluster, 'certificate-authority');
  const cert = user !== undefined ? material(user, 'client-certificate') : undefined;
  const key = user !== undefined ? material(user, 'client-key') : undefined;
  if ((cert === undefined) !== (key === undefined)) fail(`kubeconfig: user "${userName}" has a client certificate without a key, or a key without a certificate`);
  let token = user !== undefined ? str(user.value, 'token') : undefined;
  const tokenFile = user !== undefined ? str(user.value, 'tokenFile') : undefined;
  if (token === undefined && tokenFile !== undefined && user !== undefined) {
    const p = isAbsolute(tokenFile) ? tokenFile : join(user.dir, tokenFile);
    try {
      token = readFileSync(p, 'utf8').trim();
    } catch (err) {
      fail(`kubeconfig: cannot read tokenFile ${p}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  const insecure = cluster.value['insecure-skip-tls-verify'] === true;
  const serverName = str(cluster.value, 'tls-server-name');
  const [primary = server, ...endpoints] = endpointList(server, extensionServers(cluster));
  const config: RestClientConfig = {
    server: primary,
    ...(endpoints.length > 0 ? { endpoints } : {}),
    tls: {
      ...(ca !== undefined ? { ca } : {}),
      ...(cert !== undefined ? { cert } : {}),
      ...(key !== undefined ? { key } : {}),
      ...(insecure ? { insecureSkipTlsVerify: true } : {}),
      ...(serverName !== undefined ? { serverName } : {}),
    },
    ...(token !== undefined ? { token } : {}),
  };
  return { config, namespace: str(ctx.value, 'namespace') ?? 'default', contextName, files };
}
