// kubectl against the registry on a real store: the commands users type, with their output asserted as
// kubectl prints it against kube-apiserver (create, get in every format, apply twice and server-side,
// the three patch types, label, annotate, scale, delete --wait, describe, explain, error lines).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../src/harness/wait.js';
import { runKubectl, spawnKubectl, type KubectlResult } from '../helpers/kubectl-runner.js';
import { startRegistryServer, type RegistryServer } from './registry-server.js';


const MANIFEST = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports:
        - containerPort: 80
`;

describe('kubectl on the registry', () => {
  let s: RegistryServer;
  let config = '';
  let n = 0;

  beforeAll(async () => {
    s = await startRegistryServer('etcd');
    config = s.kubeconfig();
    writeFileSync(join(s.ts.dir, 'deploy.yaml'), MANIFEST);
  });
  afterAll(async () => {
    await s?.stop();
  });

  function cm(name: string): string {
    const file = join(s.ts.dir, `cm-${name}.yaml`);
    writeFileSync(file, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "1"\n`);
    return file;
  }

  async function kubectl(...args: string[]): Promise<KubectlResult> {
    return runKubectl(config, join(s.ts.dir, `home-${n++}`), args);
  }

  const ok = async (...args: string[]): Promise<string> => {
    const r = await kubectl(...args);
    expect(r.code, `kubectl ${args.join(' ')}: ${r.stderr}`).toBe(0);
    return r.stdout;
  };

  it('lists the kinds in api-resources', async () => {
    const out = await ok('api-resources');
    expect(out).toMatch(/^pods\s+po\s+v1\s+true\s+Pod$/m);
    expect(out).toMatch(/^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/m);
    expect(out).toMatch(/^namespaces\s+ns\s+v1\s+false\s+Namespace$/m);
    expect(out).toMatch(/^leases\s+coordination\.k8s\.io\/v1\s+true\s+Lease$/m);
  });

  it('creates, applies twice, applies server-side, and gets in every format', async () => {
    const file = join(s.ts.dir, 'deploy.yaml');
    expect(await ok('create', '-f', file)).toBe('deployment.apps/web created\n');
    const dup = await kubectl('create', '-f', file);
    expect(dup.stderr).toContain('Error from server (AlreadyExists): error when creating');
    expect(await ok('apply', '-f', file)).toBe('deployment.apps/web configured\n');
    expect(await ok('apply', '-f', file)).toBe('deployment.apps/web unchanged\n');
    expect(await ok('apply', '--server-side', '--force-conflicts', '-f', file)).toBe('deployment.apps/web serverside-applied\n');
    const table = (await ok('get', 'deployments')).split('\n');
    expect(table[0]).toMatch(/^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE$/);
    expect(table[1]).toMatch(/^web\s+0\/2\s+0\s+0\s+\d+s$/);
    expect((await ok('get', 'deploy', '-o', 'wide')).split('\n')[0]).toMatch(/CONTAINERS\s+IMAGES\s+SELECTOR$/);
    expect(await ok('get', 'deploy', 'web', '-o', 'name')).toBe('deployment.apps/web\n');
    expect(await ok('get', 'deploy', 'web', '-o', 'jsonpath={.spec.replicas}')).toBe('2');
    expect(JSON.parse(await ok('get', 'deploy', 'web', '-o', 'json')).spec.strategy.rollingUpdate.maxSurge).toBe('25%');
    expect(await ok('get', 'deploy', 'web', '-o', 'yaml')).toContain('progressDeadlineSeconds: 600');
  });

  it('patches with three types, labels, annotates, scales', async () => {
    // Manifests rather than kubectl create configmap (protobuf bodies: test/apiserver/registry/kubectl-protobuf.test.ts).
    await ok('apply', '-f', cm('cfg'));
    expect(await ok('patch', 'configmap', 'cfg', '--type=merge', '-p', '{"data":{"b":"2"}}')).toBe('configmap/cfg patched\n');
    expect(await ok('patch', 'configmap', 'cfg', '--type=json', '-p', '[{"op":"remove","path":"/data/a"}]')).toBe('configmap/cfg patched\n');
    expect(await ok('patch', 'configmap', 'cfg', '-p', '{"data":{"c":"3"}}')).toBe('configmap/cfg patched\n');
    expect(await ok('patch', 'configmap', 'cfg', '-p', '{"data":{"c":"3"}}')).toBe('configmap/cfg patched (no change)\n');
    expect(await ok('get', 'cm', 'cfg', '-o', 'jsonpath={.data}')).toBe('{"b":"2","c":"3"}');
    expect(await ok('label', 'cm', 'cfg', 'tier=x')).toBe('configmap/cfg labeled\n');
    expect(await ok('annotate', 'cm', 'cfg', 'note=y')).toBe('configmap/cfg annotated\n');
    expect(await ok('get', 'cm', '-l', 'tier=x', '-o', 'name')).toBe('configmap/cfg\n');
    writeFileSync(join(s.ts.dir, 'scaled.yaml'), MANIFEST.replaceAll('web', 'scaled'));
    await ok('create', '-f', join(s.ts.dir, 'scaled.yaml'));
    expect(await ok('scale', 'deployment', 'scaled', '--replicas=3')).toBe('deployment.apps/scaled scaled\n');
    expect(await ok('get', 'deploy', 'scaled', '-o', 'jsonpath={.spec.replicas}')).toBe('3');
  });

  it('describes, explains, deletes with --wait, and prints Kubernetes error lines', async () => {
    await ok('create', '-f', cm('gone'));
    expect(await ok('describe', 'configmap', 'gone')).toMatch(/^Name:\s+gone$/m);
    expect(await ok('explain', 'pod.spec.restartPolicy')).toContain('FIELD: restartPolicy');
    expect(await ok('delete', 'configmap', 'gone', '--wait')).toBe('configmap "gone" deleted\n');
    const missing = await kubectl('get', 'pod', 'x');
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe('Error from server (NotFound): pods "x" not found');
    const invalid = await kubectl('create', '-f', cm('Bad_Name'));
    expect(invalid.stderr).toContain('is invalid: metadata.name: Invalid value: "Bad_Name"');
  });

  it('watches with get -w, waits for a condition, and lists events', async () => {
    const home = join(s.ts.dir, `home-${n++}`);
    const w = spawnKubectl(config, home, ['get', 'configmaps', '-w', '-o', 'name']);
    let seen = '';
    w.stdout.on('data', (c: Buffer) => (seen += c.toString()));
    try {
      await ok('apply', '-f', cm('watched'));
      await waitFor('get -w to print the new configmap', () => seen.includes('configmap/watched'));
    } finally {
      w.kill('SIGKILL');
    }

    const podFile = join(s.ts.dir, 'pod.yaml');
    writeFileSync(podFile, 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: busybox\n');
    await ok('create', '-f', podFile);
    const cur = JSON.parse((await s.call('GET', '/api/v1/namespaces/default/pods/p')).body) as Record<string, unknown>;
    const ready = await s.call('PUT', '/api/v1/namespaces/default/pods/p/status', {
      ...cur,
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }] },
    });
    expect(ready.status, ready.body).toBe(200);
    expect(await ok('wait', '--for=condition=Ready', 'pod/p', '--timeout=30s')).toBe('pod/p condition met\n');

    const ev = await s.call('POST', '/api/v1/namespaces/default/events', {
      metadata: { name: 'p.1' },
      involvedObject: { kind: 'Pod', namespace: 'default', name: 'p', apiVersion: 'v1' },
      reason: 'Started',
      message: 'Started container c',
      type: 'Normal',
      source: { component: 'setpoint-agent' },
      // kubectl events shows firstTimestamp for an event seen once.
      firstTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      lastTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      count: 1,
    });
    expect(ev.status, ev.body).toBe(201);
    expect(JSON.parse(ev.body).lastTimestamp).toMatch(/Z$/);
    const events = (await ok('events')).split('\n');
    expect(events[0]).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
    expect(events[1]).toMatch(/^\d+s\s+Normal\s+Started\s+Pod\/p\s+Started container c$/);
    expect(await ok('get', 'events', '--field-selector', 'involvedObject.name=p', '-o', 'name')).toBe('event/p.1\n');
  });
});
