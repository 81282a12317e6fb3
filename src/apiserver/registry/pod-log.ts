// pods/log: GET /api/v1/namespaces/NS/pods/NAME/log, proxied to the agent running the pod (kube-apiserver's
// LogREST → the kubelet's /containerLogs). The agent is the Node named by spec.nodeName, reached at its
// InternalIP and status.daemonEndpoints.kubeletEndpoint.Port over HTTPS. Trust: the API server presents
// its kubelet client certificate (issued from the cluster CA at start, in system:masters) and, as
// kube-apiserver does without --kubelet-certificate-authority, does not verify the agent's own certificate.
import { request } from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { ApiRequest, ApiResponse } from '../handler.js';
import { StatusError, statuses } from '../status.js';
import type { GenericStore } from './generic-store.js';

/** The API server's client certificate towards agents (kube-apiserver's --kubelet-client-certificate). */
export interface KubeletClientCert {
  readonly certPem: string;
  readonly keyPem: string;
}

const PASSED = ['follow', 'previous', 'timestamps', 'tailLines', 'sinceSeconds', 'sinceTime', 'limitBytes'] as const;
const INTEGERS: Readonly<Record<string, number>> = { tailLines: 0, sinceSeconds: 1, limitBytes: 1 };

type Obj = Record<string, unknown>;
const rec = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const names = (v: unknown): string[] => (Array.isArray(v) ? v.map((c) => String(rec(c)['name'] ?? '')) : []);

function bad(message: string): StatusError {
  return new StatusError(statuses.badRequest(message));
}

/** The agent's query, checked as PodLogOptions' validation checks it. */
function agentQuery(q: URLSearchParams): URLSearchParams {
  const out = new URLSearchParams();
  for (const k of PASSED) {
    const v = q.get(k);
    if (v === null || v === '') continue;
    const min = INTEGERS[k];
    if (min !== undefined && !(Number.isSafeInteger(Number(v)) && Number(v) >= min)) {
      throw bad(`PodLogOptions "" is invalid: ${k}: Invalid value: ${v}: must be greater than or equal to ${min}`);
    }
    out.set(k, v);
  }
  if (out.has('sinceSeconds') && out.has('sinceTime')) throw bad('PodLogOptions "" is invalid: : Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified');
  return out;
}

function readAll(res: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    res.on('data', (c: Buffer) => {
      if (body.length < limit) body += c.toString('utf8');
    });
    res.on('end', () => resolve(body));
    res.on('error', () => resolve(body));
  });
}

export async function servePodLog(store: GenericStore, req: ApiRequest, res: ApiResponse, client: KubeletClientCert | undefined): Promise<void> {
  const { namespace, name } = req.info;
  const pod = await store.storage.get(store.key(namespace, name));
  const spec = rec(pod['spec']);
  const containers = names(spec['containers']);
  const all = [...containers, ...names(spec['initContainers'])];
  let container = req.query.get('container') ?? '';
  if (container === '') {
    if (containers.length !== 1) throw bad(`a container name must be specified for pod ${name}, choose one of: [${containers.join(' ')}]`);
    container = containers[0] ?? '';
  }
  if (!all.includes(container)) throw bad(`container ${container} is not valid for pod ${name}`);
  const query = agentQuery(req.query);
  const nodeName = typeof spec['nodeName'] === 'string' ? spec['nodeName'] : '';
  if (nodeName === '') throw bad(`pod ${name} does not have a host assigned`);
  let node;
  try {
    node = await store.ctx.raw.get(`${store.ctx.etcdPrefix}/nodes/${nodeName}`);
  } catch {
    throw bad(`nodes "${nodeName}" not found`);
  }
  const nst = rec(node['status']);
  const addresses = Array.isArray(nst['addresses']) ? (nst['addresses'] as unknown[]).map(rec) : [];
  const host = String((addresses.find((a) => a['type'] === 'InternalIP') ?? addresses[0] ?? {})['address'] ?? '');
  const port = Number(rec(rec(nst['daemonEndpoints'])['kubeletEndpoint'])['Port'] ?? 0);
  if (host === '' || !Number.isInteger(port) || port <= 0) throw bad(`node ${nodeName} does not report an address and port for its agent`);

  const path = `/containerLogs/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/${encodeURIComponent(container)}?${query.toString()}`;
  const upstream = await new Promise<IncomingMessage>((resolve, reject) => {
    const r = request(
      { host, port, path, method: 'GET', rejectUnauthorized: false, signal: req.signal, ...(client ? { cert: client.certPem, key: client.keyPem } : {}) },
      resolve,
    );
    r.on('error', (e) => reject(new StatusError(statuses.internalError(`Get "https://${host}:${port}${path}": ${e.message}`))));
    r.end();
  });
  if (upstream.statusCode !== 200) {
    const text = (await readAll(upstream, 64 * 1024)).trim();
    if (upstream.statusCode === 400 || upstream.statusCode === 404) throw bad(text);
    throw new StatusError(statuses.internalError(`the agent on ${nodeName} answered ${upstream.statusCode ?? 0}: ${text}`));
  }
  const out = res.stream(200, 'text/plain');
  const stop = (): void => {
    upstream.destroy();
  };
  out.signal.addEventListener('abort', stop, { once: true });
  try {
    for await (const chunk of upstream) {
      await out.write(chunk as Buffer);
      if (out.signal.aborted) break;
    }
  } catch {
    // the agent went away mid-stream: end what was sent
  } finally {
    out.signal.removeEventListener('abort', stop);
    out.end();
  }
}
