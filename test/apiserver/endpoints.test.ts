// The built-in endpoints over the wire: health in Kubernetes' formats (readiness following the store
// check), /version, /metrics under Kubernetes' names, discovery in both forms with content negotiation
// (the aggregated form only when asked, with its exact content type), OpenAPI v3 from the registry's
// hook and v2 absent, and the root list of paths.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGGREGATED_V2, AGGREGATED_V2BETA1 } from '../../src/apiserver/endpoints/discovery.js';
import { h1, json, type Reply, type RequestSpec } from './helpers/clients.js';
import { startTestServer, type TestServer } from './helpers/test-server.js';

const KUBECTL_DISCOVERY_ACCEPT =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

describe('built-in endpoints', () => {
  let ts: TestServer;
  let storeUp = true;
  let storeCalls = 0;
  const openapiDocs = new Map<string, unknown>([
    ['api/v1', { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths: {} }],
    ['apis/apps/v1', { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths: {} }],
  ]);
  beforeAll(async () => {
    ts = await startTestServer({
      deps: {
        storeCheck: async () => {
          storeCalls++;
          if (!storeUp) throw new Error('connection refused');
        },
        openapi: { documents: () => openapiDocs },
      },
    });
  });
  afterAll(async () => {
    await ts?.stop();
  });
  const get = (path: string, spec: Partial<RequestSpec> = {}): Promise<Reply> => h1(ts.port, ts.ca.certPem, { path, cert: ts.admin, ...spec });
  /** Waits for the store check's one-second cache to turn over, by asking until the answer changes. */
  async function readyzUntil(code: number): Promise<Reply> {
    for (;;) {
      const r = await get('/readyz');
      if (r.status === code) return r;
      await new Promise((res) => setTimeout(res, 100));
    }
  }

  describe('health', () => {
    it('plain ok, and the verbose list', async () => {
      const r = await get('/readyz');
      expect([r.status, r.body, r.headers['content-type'], r.headers['x-content-type-options']]).toEqual([200, 'ok', 'text/plain; charset=utf-8', 'nosniff']);
      expect((await get('/healthz?verbose')).body).toBe('[+]ping ok\n[+]etcd ok\nhealthz check passed\n');
      expect((await get('/livez?verbose')).body).toBe('[+]ping ok\n[+]etcd ok\nlivez check passed\n');
      expect((await get('/readyz?verbose')).body).toBe('[+]ping ok\n[+]etcd ok\n[+]shutdown ok\nreadyz check passed\n');
    });

    it('excluded checks, and an exclusion that matches nothing', async () => {
      expect((await get('/readyz?verbose&exclude=etcd')).body).toBe('[+]ping ok\n[+]etcd excluded: ok\n[+]shutdown ok\nreadyz check passed\n');
      expect((await get('/readyz?verbose&exclude=nope')).body).toBe('[+]ping ok\n[+]etcd ok\n[+]shutdown ok\nwarn: some health checks cannot be excluded: no matches for "nope"\nreadyz check passed\n');
    });

    it('one check by path; an unknown one is 404', async () => {
      expect((await get('/readyz/etcd')).body).toBe('ok');
      expect((await get('/livez/ping')).body).toBe('ok');
      expect((await get('/readyz/nope')).status).toBe(404);
      expect((await get('/readyz/etcd/more')).status).toBe(404);
    });

    it('a store that stops answering fails readiness (reason withheld from the body), and recovers', async () => {
      storeUp = false;
      try {
        const r = await readyzUntil(500);
        expect(r.body).toBe('[+]ping ok\n[-]etcd failed: reason withheld\n[+]shutdown ok\nreadyz check failed\n');
        expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
        const one = await get('/readyz/etcd');
        expect([one.status, one.body]).toEqual([500, 'internal server error: connection refused\n']);
        expect((await get('/healthz')).status).toBe(500);
      } finally {
        storeUp = true;
      }
      expect((await readyzUntil(200)).body).toBe('ok');
    });

    it('a flood of probes costs the store one check a second', async () => {
      const before = storeCalls;
      const started = Date.now();
      await Promise.all(Array.from({ length: 50 }, () => get('/readyz')));
      const seconds = Math.ceil((Date.now() - started) / 1000);
      expect(storeCalls - before).toBeLessThanOrEqual(seconds + 1);
    });
  });

  it('/version reports Kubernetes 1.32', async () => {
    const v = json<Record<string, string>>(await h1(ts.port, ts.ca.certPem, { path: '/version' }));
    expect(v).toMatchObject({ major: '1', minor: '32', gitVersion: 'v1.32.0', compiler: 'node' });
    expect(v.platform).toMatch(/^[a-z0-9]+\/[a-z0-9]+$/);
  });

  it('/metrics under Kubernetes\' names and labels', async () => {
    await get('/api/v1/namespaces/default/pods/x');
    await get('/apis/apps/v1/deployments');
    await get('/api/v1/namespaces/default/pods/x/status?dryRun=All', { method: 'PATCH', headers: { 'content-type': 'application/apply-patch+yaml' }, body: '{}' });
    await get('/readyz');
    const m = (await get('/metrics')).body;
    expect(m).toContain('apiserver_request_total{verb="GET",dry_run="",group="",version="v1",resource="pods",subresource="",scope="resource",component="apiserver",code="200"}');
    expect(m).toContain('apiserver_request_total{verb="LIST",dry_run="",group="apps",version="v1",resource="deployments",subresource="",scope="cluster",component="apiserver",code="200"}');
    expect(m).toContain('apiserver_request_total{verb="APPLY",dry_run="All",group="",version="v1",resource="pods",subresource="status",scope="resource",component="apiserver",code="200"}');
    expect(m).toContain('apiserver_request_total{verb="GET",dry_run="",group="",version="",resource="",subresource="/readyz",scope="",component="apiserver",code="200"}');
    expect(m).toMatch(/apiserver_request_duration_seconds_bucket\{le="0.005",verb="LIST",dry_run="",group="apps",version="v1",resource="deployments",subresource="",scope="cluster",component="apiserver"\} \d+/);
    expect(m).toMatch(/apiserver_current_inflight_requests\{request_kind="readOnly"\} \d+/);
    expect(m).toMatch(/apiserver_current_inflight_requests\{request_kind="mutating"\} \d+/);
    expect(m).toContain('# TYPE apiserver_storage_objects gauge');
    expect(m).toContain('process_cpu_seconds_total');
  });

  it('the registry feeds apiserver_storage_objects', async () => {
    ts.server.metrics.setStorageObjects('deployments.apps', 7);
    expect((await get('/metrics')).body).toContain('apiserver_storage_objects{resource="deployments.apps"} 7');
  });

  it('unknown resources do not become label values', async () => {
    await get('/api/v1/namespaces/default/zzz-unknown-resource');
    expect((await get('/metrics')).body).not.toContain('zzz-unknown-resource');
  });

  describe('discovery', () => {
    it('kubectl\'s Accept gets the aggregated v2 list with its exact content type', async () => {
      const r = await get('/apis', { headers: { accept: KUBECTL_DISCOVERY_ACCEPT } });
      expect(r.headers['content-type']).toBe(AGGREGATED_V2);
      expect(r.headers.vary).toBe('Accept');
      const list = json<{ kind: string; apiVersion: string; items: { metadata: { name?: string }; versions: { version: string; freshness: string; resources: Record<string, unknown>[] }[] }[] }>(r);
      expect(list.kind).toBe('APIGroupDiscoveryList');
      expect(list.apiVersion).toBe('apidiscovery.k8s.io/v2');
      expect(list.items.map((i) => i.metadata.name)).toEqual(['apps', 'coordination.k8s.io']);
      const deployments = list.items[0]?.versions[0]?.resources[0];
      expect(deployments).toEqual({
        resource: 'deployments',
        responseKind: { group: 'apps', version: 'v1', kind: 'Deployment' },
        scope: 'Namespaced',
        singularResource: 'deployment',
        verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
        shortNames: ['deploy'],
        categories: ['all'],
        subresources: [
          { subresource: 'status', responseKind: { group: 'apps', version: 'v1', kind: 'Deployment' }, verbs: ['get', 'patch', 'update'] },
          { subresource: 'scale', responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] },
        ],
      });
      expect(list.items[0]?.versions[0]?.freshness).toBe('Current');
    });

    it('/api aggregated holds only the core group', async () => {
      const r = await get('/api', { headers: { accept: KUBECTL_DISCOVERY_ACCEPT } });
      expect(r.headers['content-type']).toBe(AGGREGATED_V2);
      const list = json<{ items: { metadata: Record<string, unknown>; versions: { resources: { resource: string; scope: string }[] }[] }[] }>(r);
      expect(list.items).toHaveLength(1);
      expect(list.items[0]?.metadata).toEqual({ creationTimestamp: null });
      expect(list.items[0]?.versions[0]?.resources.map((x) => [x.resource, x.scope])).toEqual([
        ['namespaces', 'Cluster'],
        ['pods', 'Namespaced'],
        ['componentstatuses', 'Cluster'],
      ]);
    });

    it('v2beta1 when only it is asked for', async () => {
      const r = await get('/apis', { headers: { accept: AGGREGATED_V2BETA1 } });
      expect(r.headers['content-type']).toBe(AGGREGATED_V2BETA1);
      expect(json(r).apiVersion).toBe('apidiscovery.k8s.io/v2beta1');
    });

    it.each([undefined, 'application/json', '*/*', 'application/vnd.kubernetes.protobuf,application/json'])('Accept %s gets legacy discovery as application/json', async (accept) => {
      const r = await get('/apis', accept ? { headers: { accept } } : {});
      expect(r.headers['content-type']).toBe('application/json');
      expect(json(r)).toEqual({
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: [
          { name: 'apps', versions: [{ groupVersion: 'apps/v1', version: 'v1' }], preferredVersion: { groupVersion: 'apps/v1', version: 'v1' } },
          { name: 'coordination.k8s.io', versions: [{ groupVersion: 'coordination.k8s.io/v1', version: 'v1' }], preferredVersion: { groupVersion: 'coordination.k8s.io/v1', version: 'v1' } },
        ],
      });
    });

    it('only protobuf is 406', async () => {
      const r = await get('/apis', { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
      expect(r.status).toBe(406);
      expect(json(r)).toMatchObject({ reason: 'NotAcceptable', message: expect.stringMatching(/^only the following media types are accepted: application\/json/) });
    });

    it('ETag and 304', async () => {
      const first = await get('/apis', { headers: { accept: AGGREGATED_V2 } });
      const etag = String(first.headers.etag);
      const again = await get('/apis', { headers: { accept: AGGREGATED_V2, 'if-none-match': etag } });
      expect(again.status).toBe(304);
      expect(again.body).toBe('');
      const legacy = await get('/apis', { headers: { 'if-none-match': etag } });
      expect(legacy.status).toBe(200);
    });

    it('/api, /apis/<group>, and resource lists with subresources', async () => {
      expect(json(await get('/api'))).toEqual({ kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: `127.0.0.1:${ts.port}` }] });
      expect(json(await get('/apis/apps'))).toEqual({ kind: 'APIGroup', apiVersion: 'v1', name: 'apps', versions: [{ groupVersion: 'apps/v1', version: 'v1' }], preferredVersion: { groupVersion: 'apps/v1', version: 'v1' } });
      const core = json<{ kind: string; apiVersion?: string; groupVersion: string; resources: Record<string, unknown>[] }>(await get('/api/v1'));
      expect(core.kind).toBe('APIResourceList');
      expect(core.apiVersion).toBeUndefined();
      expect(core.groupVersion).toBe('v1');
      expect(core.resources.map((r) => r.name)).toEqual(['namespaces', 'namespaces/status', 'namespaces/finalize', 'pods', 'pods/status', 'pods/log', 'pods/binding', 'componentstatuses']);
      expect(core.resources[3]).toMatchObject({ name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', shortNames: ['po'], categories: ['all'], storageVersionHash: expect.any(String) });
      const apps = json<{ apiVersion: string; resources: Record<string, unknown>[] }>(await get('/apis/apps/v1'));
      expect(apps.apiVersion).toBe('v1');
      expect(apps.resources.find((r) => r.name === 'deployments/scale')).toEqual({ name: 'deployments/scale', singularName: '', namespaced: true, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] });
    });
  });

  describe('OpenAPI', () => {
    it('/openapi/v2 is not served', async () => {
      const r = await get('/openapi/v2', { headers: { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } });
      expect(r.status).toBe(404);
    });

    it('/openapi/v3 indexes the registry\'s documents by hash; each is served, immutable at its hash', async () => {
      const index = json<{ paths: Record<string, { serverRelativeURL: string }> }>(await get('/openapi/v3'));
      expect(Object.keys(index.paths)).toEqual(['api/v1', 'apis/apps/v1']);
      const url = index.paths['apis/apps/v1']?.serverRelativeURL ?? '';
      expect(url).toMatch(/^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]{128}$/);
      const doc = await get(url);
      expect(doc.status).toBe(200);
      expect(doc.headers['cache-control']).toBe('public, immutable');
      expect(json(doc)).toEqual(openapiDocs.get('apis/apps/v1'));
      const stale = await get('/openapi/v3/apis/apps/v1?hash=OLD');
      expect(stale.status).toBe(301);
      expect(stale.headers.location).toBe(url);
      expect((await get('/openapi/v3/apis/apps/v1')).headers['cache-control']).toBe('no-cache, private');
      expect((await get('/openapi/v3/apis/nope/v1')).status).toBe(404);
    });
  });

  it('/ lists the served paths', async () => {
    const { paths } = json<{ paths: string[] }>(await get('/'));
    expect(paths).toEqual([...paths].sort());
    for (const p of ['/api', '/api/v1', '/apis', '/apis/apps', '/apis/apps/v1', '/healthz', '/livez', '/readyz', '/readyz/etcd', '/readyz/shutdown', '/metrics', '/openapi/v3', '/version']) expect(paths).toContain(p);
  });
});
