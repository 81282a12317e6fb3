// kubectl's typed generators send protobuf bodies (application/vnd.kubernetes.protobuf, a runtime.Unknown
// in the `k8s\0` envelope): the real kubectl's `create configmap|secret|deployment` against the registry
// on a real etcd, answered in JSON, the objects stored as kubectl meant them; and bad protobuf bytes.
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../helpers/clients.js';
import type { KubectlResult } from '../helpers/kubectl-runner.js';
import { startRegistryServer, type RegistryServer } from './registry-server.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('protobuf request bodies from kubectl', () => {
  let s: RegistryServer;

  beforeAll(async () => {
    s = await startRegistryServer('etcd');
  });
  afterAll(async () => {
    await s?.stop();
  });

  const kubectl = (...args: string[]): Promise<KubectlResult> => s.kubectl(...args);

  it('kubectl create configmap stores its data and binary data', async () => {
    const ns = await s.namespace('pb');
    writeFileSync(join(s.ts.dir, 'blob.bin'), Buffer.from([0, 1, 2, 255]));
    const r = await kubectl('create', 'configmap', 'settings', '-n', ns, '--from-literal=mode=fast', '--from-literal=size=3', `--from-file=blob=${join(s.ts.dir, 'blob.bin')}`);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('configmap/settings created');
    const got = json<Obj>(await s.call('GET', `/api/v1/namespaces/${ns}/configmaps/settings`));
    expect(got.data).toEqual({ mode: 'fast', size: '3' });
    expect(got.binaryData).toEqual({ blob: Buffer.from([0, 1, 2, 255]).toString('base64') });
    expect(got.metadata.creationTimestamp).toMatch(/Z$/);
  });

  it('kubectl create secret generic stores base64 data and its type', async () => {
    const ns = await s.namespace('pb');
    const r = await kubectl('create', 'secret', 'generic', 'creds', '-n', ns, '--from-literal=password=s3cr3t');
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('secret/creds created');
    const got = json<Obj>(await s.call('GET', `/api/v1/namespaces/${ns}/secrets/creds`));
    expect(got.type).toBe('Opaque');
    expect(Buffer.from(got.data.password as string, 'base64').toString()).toBe('s3cr3t');
  });

  it('kubectl create deployment stores replicas, selector, template and ports, with defaults', async () => {
    const ns = await s.namespace('pb');
    const r = await kubectl('create', 'deployment', 'web', '-n', ns, '--image=nginx:1.27', '--replicas=3', '--port=8080');
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('deployment.apps/web created');
    const got = json<Obj>(await s.call('GET', `/apis/apps/v1/namespaces/${ns}/deployments/web`));
    expect(got.metadata.labels).toEqual({ app: 'web' });
    expect(got.spec).toMatchObject({
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.27', ports: [{ containerPort: 8080, protocol: 'TCP' }] }] } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
    });
  });

  it('bytes without the envelope are a 400, and kinds not decoded from protobuf keep their 415', async () => {
    const ns = await s.namespace('pb');
    const bad = await s.call('POST', `/api/v1/namespaces/${ns}/configmaps`, 'not protobuf', { 'content-type': 'application/vnd.kubernetes.protobuf' });
    expect(bad.status).toBe(400);
    expect(json(bad).message).toBe('provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]');
    const pod = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, 'k8s\u0000', { 'content-type': 'application/vnd.kubernetes.protobuf' });
    expect(pod.status).toBe(415);
  });
});
