// OpenAPI v3 documents: their shape (component names, x-kubernetes extensions, paths whose patch
// operation carries the kind and fieldValidation), and the real kubectl on this machine explaining
// fields from them, served by a small HTTP server in the test with the discovery kubectl needs first.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupVersionPath, openAPIDocument, openAPIIndex } from '../../src/api/openapi.js';
import type { OpenAPIResource } from '../../src/api/openapi.js';
import { builtinSchemas } from '../../src/api/schema/registry.js';

const run = promisify(execFile);
const all = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];
const core: OpenAPIResource[] = [
  { name: 'pods', kind: 'Pod', namespaced: true, verbs: all, subresources: [{ name: 'status', kind: 'Pod', verbs: ['get', 'update', 'patch'] }, { name: 'binding', kind: 'Binding', verbs: ['create'] }] },
  { name: 'nodes', kind: 'Node', namespaced: false, verbs: all },
  { name: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: all },
];
const apps: OpenAPIResource[] = [
  { name: 'deployments', kind: 'Deployment', namespaced: true, verbs: all, subresources: [{ name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: ['get', 'update', 'patch'] }] },
];
type Doc = { paths: Record<string, Record<string, Record<string, unknown>>>; components: { schemas: Record<string, Record<string, unknown>> } };
const coreDoc = openAPIDocument(builtinSchemas, { group: '', version: 'v1' }, core) as unknown as Doc;
const appsDoc = openAPIDocument(builtinSchemas, { group: 'apps', version: 'v1' }, apps) as unknown as Doc;

describe('OpenAPI v3 documents', () => {
  it('names schemas as Kubernetes does and marks kinds, lists and merge keys', () => {
    const pod = coreDoc.components.schemas['io.k8s.api.core.v1.Pod'];
    expect(pod?.['x-kubernetes-group-version-kind']).toEqual([{ group: '', kind: 'Pod', version: 'v1' }]);
    expect((pod?.properties as Record<string, unknown>).metadata).toEqual({
      allOf: [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }],
      default: {},
      description: 'Standard object metadata.',
    });
    const containers = (coreDoc.components.schemas['io.k8s.api.core.v1.PodSpec']?.properties as Record<string, Record<string, unknown>>).containers;
    expect(containers).toMatchObject({
      type: 'array',
      items: { allOf: [{ $ref: '#/components/schemas/io.k8s.api.core.v1.Container' }], default: {} },
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      'x-kubernetes-patch-merge-key': 'name',
      'x-kubernetes-patch-strategy': 'merge',
    });
    expect(coreDoc.components.schemas['io.k8s.api.core.v1.Container']?.required).toEqual(['name']);
    expect(coreDoc.components.schemas['io.k8s.api.core.v1.PodList']?.['x-kubernetes-group-version-kind']).toEqual([{ group: '', kind: 'PodList', version: 'v1' }]);
    expect(coreDoc.components.schemas['io.k8s.apimachinery.pkg.api.resource.Quantity']).toMatchObject({ oneOf: [{ type: 'string' }, { type: 'number' }] });
    expect(coreDoc.components.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector']?.['x-kubernetes-map-type']).toBe('atomic');
    const strategy = (appsDoc.components.schemas['io.k8s.api.apps.v1.DeploymentSpec']?.properties as Record<string, Record<string, unknown>>).strategy;
    expect(strategy?.['x-kubernetes-patch-strategy']).toBe('retainKeys');
    expect(appsDoc.components.schemas['io.k8s.api.autoscaling.v1.Scale']).toBeDefined();
    for (const [name, s] of Object.entries(coreDoc.components.schemas)) expect(typeof s.description, name).toBe('string');
  });

  it('has the paths kubectl validation looks for: a patch with the kind and fieldValidation', () => {
    const item = coreDoc.paths['/api/v1/namespaces/{namespace}/pods/{name}'];
    const patch = item?.patch as { 'x-kubernetes-group-version-kind': unknown; parameters: { name: string }[]; requestBody: { content: Record<string, unknown> } };
    expect(patch['x-kubernetes-group-version-kind']).toEqual({ group: '', kind: 'Pod', version: 'v1' });
    expect(patch.parameters.map((p) => p.name)).toContain('fieldValidation');
    expect(Object.keys(patch.requestBody.content)).toContain('application/strategic-merge-patch+json');
    expect(coreDoc.paths['/api/v1/nodes/{name}']).toBeDefined();
    expect(coreDoc.paths['/api/v1/pods']?.get).toBeDefined();
    expect(coreDoc.paths['/api/v1/namespaces/{namespace}/pods/{name}/status']?.put).toBeDefined();
    expect((appsDoc.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale']?.patch as Record<string, unknown>)['x-kubernetes-group-version-kind']).toEqual({ group: 'autoscaling', kind: 'Scale', version: 'v1' });
    const index = openAPIIndex([{ groupVersion: { group: '', version: 'v1' }, document: coreDoc }]) as { paths: Record<string, { serverRelativeURL: string }> };
    expect(index.paths['api/v1']?.serverRelativeURL).toMatch(/^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]{128}$/);
  });
});

describe('kubectl explain on these documents', () => {
  let dir = '';
  let url = '';
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    const send = (body: unknown, code = 200): void => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const docs: Record<string, unknown> = { [groupVersionPath({ group: '', version: 'v1' })]: coreDoc, [groupVersionPath({ group: 'apps', version: 'v1' })]: appsDoc };
    const resources = (gv: string, list: OpenAPIResource[]): unknown => ({
      kind: 'APIResourceList', groupVersion: gv,
      resources: list.map((r) => ({ name: r.name, singularName: r.kind.toLowerCase(), namespaced: r.namespaced, kind: r.kind, verbs: r.verbs })),
    });
    if (path === '/version') return send({ major: '1', minor: '32', gitVersion: 'v1.32.0' });
    if (path === '/api') return send({ kind: 'APIVersions', versions: ['v1'] });
    if (path === '/apis') return send({ kind: 'APIGroupList', groups: [{ name: 'apps', versions: [{ groupVersion: 'apps/v1', version: 'v1' }] }] });
    if (path === '/api/v1') return send(resources('v1', core));
    if (path === '/apis/apps/v1') return send(resources('apps/v1', apps));
    if (path === '/openapi/v3') return send(openAPIIndex([{ groupVersion: { group: '', version: 'v1' }, document: coreDoc }, { groupVersion: { group: 'apps', version: 'v1' }, document: appsDoc }]));
    const doc = docs[path.replace(/^\/openapi\/v3\//, '')];
    if (path.startsWith('/openapi/v3/') && doc !== undefined) return send(doc);
    return send({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'the server could not find the requested resource', reason: 'NotFound', code: 404 }, 404);
  });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'setpoint-openapi-'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await writeFile(
      join(dir, 'kubeconfig'),
      `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${url}"}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`,
    );
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  const explain = async (...args: string[]): Promise<string> => {
    const { stdout } = await run('kubectl', ['--kubeconfig', join(dir, 'kubeconfig'), '--cache-dir', join(dir, 'cache'), 'explain', ...args], { timeout: 60_000 });
    return stdout;
  };

  it('explains pod.spec.containers', async () => {
    const out = await explain('pod.spec.containers');
    expect(out).toContain('KIND:       Pod');
    expect(out).toContain('FIELD: containers <[]Container>');
    expect(out).toContain('A single application container to run within a pod.');
    expect(out).toMatch(/name\s+<string> -required-/);
    expect(out).toMatch(/imagePullPolicy\s+<string>/);
    expect(out).toContain('livenessProbe');
  });

  it('explains enums and Deployment fields through apps/v1', async () => {
    const out = await explain('pod.spec.restartPolicy');
    expect(out).toContain('Always, OnFailure or Never. Defaults to Always.');
    expect(out).toMatch(/Possible enum values|ENUM/);
    const d = await explain('deployment.spec.strategy.rollingUpdate.maxSurge');
    expect(d).toContain('GROUP:      apps');
    expect(d).toContain('rounded up');
  });
});
