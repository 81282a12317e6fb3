// The registry behind a real API server for tests: a store cluster of the given kind (real etcd 3.4 or a
// Setpoint store), the ApiRegistry on it, and the test server's shell on a random port. stop() ends all.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderKubeconfig } from '../../../src/apiserver/pki/kubeconfig.js';
import type { EtcdClient } from '../../../src/etcd-client/etcd-client.js';
import type { AdmissionOptions } from '../../../src/apiserver/admission/default-admission.js';
import { ApiRegistry } from '../../../src/apiserver/registry/api-registry.js';
import type { ResourceHandler } from '../../../src/apiserver/handler.js';
import { statuses } from '../../../src/apiserver/status.js';
import { StoreTestCluster, type StoreKind } from '../../etcd-client/helpers/store-cluster.js';
import { h1, type Reply } from '../helpers/clients.js';
import { runKubectl, type KubectlResult } from '../helpers/kubectl-runner.js';
import { startTestServer, testLog, type TestServer } from '../helpers/test-server.js';

export interface RegistryServer {
  readonly ts: TestServer;
  readonly api: ApiRegistry;
  readonly client: EtcdClient;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
  /** Writes an admin kubeconfig for this server into its directory and answers its path. */
  kubeconfig(): string;
  /** Runs the real kubectl as admin against this server (a fresh HOME each time). */
  kubectl(...args: string[]): Promise<KubectlResult>;
  /** Makes a namespace of a fresh name (with `labels`) and answers its name; throws unless 201. */
  namespace(prefix?: string, labels?: Record<string, string>): Promise<string>;
  stop(): Promise<void>;
}

export interface RegistryServerOptions {
  /** False: route and discover the kinds without their `history` subresource, as a server that lacks it. */
  readonly historySubresource?: boolean;
}

/** The registry as `setpoint apiserver` runs it: the default admission chain (with `admission`'s options). */
export async function startRegistryServer(kind: StoreKind, prefix = '/registry', admission: AdmissionOptions = {}, opts: RegistryServerOptions = {}): Promise<RegistryServer> {
  const cluster = await StoreTestCluster.start(kind);
  let api: ApiRegistry | undefined;
  let ts: TestServer | undefined;
  try {
    const client = cluster.client();
    const made = new ApiRegistry({ client, etcdPrefix: prefix, eventTtlSeconds: 3600, log: testLog, admissionOptions: admission });
    api = made;
    await made.ensureSystemNamespaces();
    await made.ensureSystemPriorityClasses();
    const handler: ResourceHandler = {
      serve: async (req, res) => {
        const store = made.store(req.resource.group, req.resource.resource);
        if (!store) return res.status(statuses.pathNotFound());
        return store.serve(req, res);
      },
    };
    const served = made.registry.all().map((r) => r.descriptor);
    const descriptors = opts.historySubresource === false ? served.map((d) => ({ ...d, subresources: d.subresources.filter((x) => x.name !== 'history') })) : served;
    const server = await startTestServer({ handler, descriptors, deps: { openapi: made.openapi('v1.32.0') } });
    ts = server;
    const call: RegistryServer['call'] = (method, path, body, headers = {}) => {
      const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
      // Node sends a DELETE's body with neither length nor chunking unless told the length.
      const length: Record<string, string> = text !== undefined ? { 'content-length': String(Buffer.byteLength(text)) } : {};
      return h1(server.port, server.ca.certPem, {
        method,
        path,
        cert: server.admin,
        headers: { 'content-type': 'application/json', ...length, ...headers },
        ...(text !== undefined ? { body: text } : {}),
      });
    };
    let homes = 0;
    let config: string | undefined;
    const kubeconfig = (): string => {
      const file = join(server.dir, 'admin.kubeconfig');
      const spec = { server: server.url, caPem: server.ca.certPem, userName: 'admin', clientCertPem: server.admin.certPem, clientKeyPem: server.admin.keyPem };
      writeFileSync(file, renderKubeconfig(spec), { mode: 0o600 });
      return file;
    };
    return {
      ts: server,
      api: made,
      client,
      call,
      kubeconfig,
      kubectl: (...args) => {
        config ??= kubeconfig();
        return runKubectl(config, join(server.dir, `kubectl-home-${homes++}`), args);
      },
      async namespace(prefix = 't', labels = {}) {
        const name = `${prefix}-${randomUUID().slice(0, 8)}`;
        const r = await call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
        if (r.status !== 201) throw new Error(`making namespace ${name}: ${r.status} ${r.body}`);
        return name;
      },
      async stop() {
        await server.stop();
        await made.close();
        await cluster.stop();
      },
    };
  } catch (e) {
    await ts?.stop();
    await api?.close();
    await cluster.stop();
    throw e;
  }
}
