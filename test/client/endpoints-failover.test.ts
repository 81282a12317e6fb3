// Clients on several API servers, as real processes (dist/: build first): three `setpoint apiserver`s on
// one etcd sharing one cluster CA, an admin client and an informer on the three endpoints, and a
// `setpoint agent` whose kubeconfig lists them all. SIGKILL the server in use: reads, a raw watch and the
// informer go on through another one (the watch resumes, no event replayed), writes fail over when the
// connect is refused; a write that reached a server which then dropped it is not sent again. The agent
// keeps renewing its node Lease after its own server dies, and its node stays Ready. kubectl 1.32 reads
// the kubeconfig with the extension.
import http2 from 'node:http2';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CERT_DIR_FILES, readCertDirCa } from '../../src/apiserver/pki/cert-dir.js';
import { issueClientCert } from '../../src/apiserver/pki/certificates.js';
import { writeClientKubeconfig } from '../../src/apiserver/pki/kubeconfig.js';
import { ClientError, isNotFound } from '../../src/client/api-status-error.js';
import { Informer } from '../../src/client/informer.js';
import type { KubeObject } from '../../src/client/kube-object.js';
import { loadKubeconfig } from '../../src/client/kubeconfig.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { CONFIGMAPS, LEASES, NODES } from '../../src/client/resource-types.js';
import { RestClient, type RestClientConfig } from '../../src/client/rest-client.js';
import type { TlsOptions } from '../../src/client/transport.js';
import type { WatchEvent } from '../../src/client/watch-decoder.js';
import { freePort } from '../../src/harness/free-port.js';
import { apiServerKind } from '../../src/harness/kinds/apiserver.js';
import { ManagedProcess } from '../../src/harness/managed-process.js';
import { startProcess } from '../../src/harness/process-kind.js';
import { setpointMain } from '../../src/harness/setpoint-main.js';
import { waitFor } from '../../src/harness/wait.js';
import { runKubectl } from '../apiserver/helpers/kubectl-runner.js';
import { StoreTestCluster } from '../etcd-client/helpers/store-cluster.js';

type Obj = KubeObject & { data?: Record<string, string>; spec?: Record<string, unknown>; status?: Record<string, unknown> };

const NS = 'default';
const NODE = 'failover-node';

/**
 * A TLS HTTP/2 server that takes requests and never answers them: it drops the connection ("did it
 * reach?"), or with `hold` keeps it open (a server that hangs).
 */
async function droppingServer(certDir: string, hold = false): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const server = http2.createSecureServer({
    cert: readFileSync(join(certDir, CERT_DIR_FILES.servingCert)),
    key: readFileSync(join(certDir, CERT_DIR_FILES.servingKey)),
    allowHTTP1: true,
  });
  server.on('request', (req: http2.Http2ServerRequest) => {
    seen.push(`${req.method} ${req.url}`);
    if (hold) return;
    if (req.stream) req.stream.session?.destroy();
    else req.socket.destroy();
  });
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => sessions.add(s.on('close', () => sessions.delete(s))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  if (addr === null || typeof addr === 'string') throw new Error('no port');
  return { url: `https://127.0.0.1:${addr.port}`, seen, close: () => new Promise((resolve) => {
      for (const s of sessions) s.destroy();
      server.close(() => resolve());
    }) };
}

describe('clients fail over between API servers', () => {
  let dir: string;
  let etcd: StoreTestCluster;
  const apis: ManagedProcess[] = [];
  const urls: string[] = [];
  let certDir: string;
  let tls: TlsOptions;
  let rest: RestClient;
  let agent: ManagedProcess | undefined;
  const logLines: string[] = [];
  const watched: WatchEvent<Obj>[] = [];
  const ac = new AbortController();
  let informer: Informer<Obj>;
  let informerDone: Promise<void> | undefined;
  let watchDone: Promise<void> | undefined;
  const clients: RestClient[] = [];
  const client = (config: RestClientConfig): RestClient => {
    const c = new RestClient(config);
    clients.push(c);
    return c;
  };
  const cms = (r: RestClient = rest): ResourceClient<Obj> => new ResourceClient<Obj>(r, CONFIGMAPS);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'endpoints-failover-'));
    certDir = join(dir, 'pki');
    etcd = await StoreTestCluster.start('etcd');
    // One after the other: the first makes the cluster CA and serving certificate, the others use them.
    for (let i = 0; i < 3; i++) {
      const { process: p, ports } = await startProcess(apiServerKind, { etcdServers: etcd.endpoints(), certDir }, { name: `apiserver-${i}`, dir, timeoutMs: 90_000 });
      apis.push(p);
      urls.push(`https://127.0.0.1:${ports.secure}`);
    }
    const ca = readCertDirCa(certDir);
    const admin = await issueClientCert(ca, { user: 'admin', groups: ['system:masters'] });
    tls = { ca: ca.certPem, cert: admin.certPem, key: admin.keyPem };
    const log = pino({ level: 'info' }, { write: (s: string) => void logLines.push(s) });
    rest = client({ server: urls[0]!, endpoints: urls.slice(1), tls, log });

    // The agent's own server is the third; it lists the others after it, as `setpoint up` writes it.
    const agentKc = join(dir, 'agent.kubeconfig');
    await writeClientKubeconfig(agentKc, ca, { server: urls[2]!, endpoints: urls, user: `system:node:${NODE}`, groups: ['system:nodes'] });
    const agentPort = await freePort();
    agent = new ManagedProcess(
      'setpoint agent',
      {
        bin: process.execPath,
        args: [setpointMain(), 'agent', `--kubeconfig=${agentKc}`, `--node-name=${NODE}`, `--root-dir=${join(dir, 'agent')}`, `--port=${agentPort}`, '--node-lease-duration-seconds=4', '--node-status-update-frequency=1s'],
        env: { SETPOINT_LOG_FORMAT: 'json' },
      },
      { logFile: join(dir, 'agent.log'), capture: true },
    );
    agent.start();
  }, 240_000);

  afterAll(async () => {
    ac.abort();
    await Promise.allSettled([informerDone, watchDone]);
    for (const c of clients) c.close();
    await agent?.kill('SIGKILL');
    for (const p of apis) await p.kill('SIGKILL');
    await etcd?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('kubectl 1.32 reads a kubeconfig with the endpoints extension and uses its server', async () => {
    const kc = join(dir, 'admin.kubeconfig');
    await writeClientKubeconfig(kc, readCertDirCa(certDir), { server: urls, endpoints: urls, user: 'admin', groups: ['system:masters'] });
    expect(loadKubeconfig({ path: kc }).config).toMatchObject({ server: urls[0], endpoints: urls.slice(1) });
    const view = await runKubectl(kc, join(dir, 'home-view'), ['config', 'view', '-o', 'json']);
    expect(view.code, view.stderr).toBe(0);
    const clusters = (JSON.parse(view.stdout) as { clusters: { cluster: { server: string; extensions?: { name: string }[] } }[] }).clusters;
    expect(clusters.map((c) => c.cluster.server)).toEqual(urls);
    expect(clusters[0]?.cluster.extensions?.map((e) => e.name)).toEqual(['setpoint.io/endpoints']);
    const get = await runKubectl(kc, join(dir, 'home-get'), ['get', 'namespaces', 'default', '-o', 'name']);
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout.trim()).toBe('namespace/default');
  }, 60_000);

  it('starts an informer and a raw watch on the first endpoint; the agent registers on its own', async () => {
    await cms().create({ metadata: { name: 'before', namespace: NS }, data: { n: '0' } });
    informer = new Informer<Obj>(cms(), { namespace: NS });
    informerDone = informer.run(ac.signal);
    expect(await informer.waitForSync(ac.signal)).toBe(true);
    const listed = await cms().list(NS);
    watchDone = (async () => {
      for await (const ev of cms().watch(NS, { resourceVersion: listed.metadata.resourceVersion ?? '', signal: ac.signal })) watched.push(ev);
    })();
    await cms().create({ metadata: { name: 'watched-1', namespace: NS } });
    await waitFor('the watch to see watched-1', () => watched.some((e) => e.object.metadata?.name === 'watched-1'), { timeoutMs: 30_000 });
    await waitFor('the informer to have watched-1', () => informer.lister.get(NS, 'watched-1') !== undefined, { timeoutMs: 30_000 });
    expect(rest.server).toBe(urls[0]);
    await waitFor('the agent to register a Ready node', async () => nodeReady(await new ResourceClient<Obj>(rest, NODES).get('', NODE).catch(() => undefined)), { timeoutMs: 90_000 });
  }, 120_000);

  it('SIGKILL the server in use: reads, the raw watch and the informer go on through the next one, writes fail over', async () => {
    await apis[0]!.kill('SIGKILL');
    // A read: the connection to the first server is refused, the GET goes to the next.
    expect((await cms().get(NS, 'before')).data).toEqual({ n: '0' });
    expect(rest.server).toBe(urls[1]);
    // A write from a client whose first connect is refused is sent to the next server, once.
    const writer = client({ server: urls[0]!, endpoints: urls.slice(1), tls });
    await cms(writer).create({ metadata: { name: 'after-kill', namespace: NS }, data: { n: '1' } });
    expect(writer.server).toBe(urls[1]);
    expect((await cms().get(NS, 'after-kill')).data).toEqual({ n: '1' });
    await cms().update({ ...(await cms().get(NS, 'after-kill')), data: { n: '2' } });
    await waitFor('the informer to see the update', () => informer.lister.get(NS, 'after-kill')?.data?.n === '2', { timeoutMs: 60_000 });
    await waitFor('the raw watch to see the update', () => watched.some((e) => e.object.metadata?.name === 'after-kill' && e.object.data?.n === '2'), { timeoutMs: 60_000 });
    // Resumed from its last resourceVersion: nothing it had delivered comes again.
    expect(watched.filter((e) => e.object.metadata?.name === 'watched-1').map((e) => e.type)).toEqual(['ADDED']);
    expect(watched.filter((e) => e.object.metadata?.name === 'after-kill').map((e) => e.type)).toEqual(['ADDED', 'MODIFIED']);
    const switches = logLines.filter((l) => l.includes('switching to the next endpoint'));
    expect(switches).toHaveLength(1);
    expect(JSON.parse(switches[0]!)).toMatchObject({ from: urls[0], to: urls[1] });
  }, 120_000);

  it('a write that reached a server which dropped it is not sent again; a GET is', async () => {
    const dropping = await droppingServer(certDir);
    try {
      const c = client({ server: dropping.url, endpoints: [urls[1]!], tls });
      const err = await cms(c).create({ metadata: { name: 'maybe-written', namespace: NS } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ClientError);
      expect((err as ClientError).code).toBe('CLIENT_TRANSPORT');
      expect(dropping.seen).toEqual([`POST /api/v1/namespaces/${NS}/configmaps`]);
      expect(isNotFound(await cms().get(NS, 'maybe-written').catch((e: unknown) => e))).toBe(true);
      // The dropped connection moved the client on: its next request goes to the live server.
      expect(c.server).toBe(urls[1]);
      const g = client({ server: dropping.url, endpoints: [urls[1]!], tls });
      expect((await cms(g).get(NS, 'before')).data).toEqual({ n: '0' });
      expect(dropping.seen).toEqual([`POST /api/v1/namespaces/${NS}/configmaps`, `GET /api/v1/namespaces/${NS}/configmaps/before`]);
    } finally {
      await dropping.close();
    }
  }, 60_000);

  it('a server that takes a request and never answers: the request times out and the client moves on', async () => {
    const hanging = await droppingServer(certDir, true);
    try {
      const c = client({ server: hanging.url, endpoints: [urls[1]!], tls, timeoutMs: 1000 });
      const err = await cms(c).get(NS, 'before').catch((e: unknown) => e);
      expect((err as ClientError).code).toBe('CLIENT_TIMEOUT');
      expect(hanging.seen).toEqual([`GET /api/v1/namespaces/${NS}/configmaps/before`]);
      expect(c.server).toBe(urls[1]);
      expect((await cms(c).get(NS, 'before')).data).toEqual({ n: '0' });
    } finally {
      await hanging.close();
    }
  }, 60_000);

  it("SIGKILL the agent's own server: it renews its node Lease through another and the node stays Ready", async () => {
    const leases = new ResourceClient<Obj>(rest, LEASES);
    const renewTime = async (): Promise<string> => String((await leases.get('kube-node-lease', NODE)).spec?.renewTime ?? '');
    await apis[2]!.kill('SIGKILL');
    const atKill = await renewTime();
    let last = atKill;
    // Three renewals after the kill (every second with a 4 s lease): not one that was in flight as it died.
    for (let i = 0; i < 3; i++) {
      const prev = last;
      last = await waitFor(`renewal ${i + 1} after the kill`, async () => {
        const t = await renewTime();
        return t > prev ? t : undefined;
      }, { timeoutMs: 30_000, detail: () => `renewTime ${prev}; agent output:\n${agent?.stderr ?? ''}`.slice(-3000) });
    }
    expect(nodeReady(await new ResourceClient<Obj>(rest, NODES).get('', NODE))).toBe(true);
    await waitFor('the agent to log its switch', () => agent?.stderr.includes('switching to the next endpoint'), { timeoutMs: 10_000 });
    expect(agent?.exitStatus).toBeUndefined();
  }, 120_000);
});

function nodeReady(n: Obj | undefined): boolean {
  const conditions = (n?.status?.['conditions'] ?? []) as { type: string; status: string }[];
  return conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}
