// The namespace controller against a real API server: `kubectl delete namespace` returns once the
// namespace's content is gone and the namespace with it; content held by a finalizer keeps it
// Terminating with Kubernetes' conditions until the finalizer goes.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderKubeconfig } from '../../src/apiserver/pki/kubeconfig.js';
import { isNotFound } from '../../src/client/api-status-error.js';
import type { KubeObject } from '../../src/client/kube-object.js';
import { CONFIGMAPS, DEPLOYMENTS, NAMESPACES, PODS, SECRETS } from '../../src/client/resource-types.js';
import { namespaceControllerFactory } from '../../src/controllers/namespace/namespace-controller.js';
import type { StatusCondition } from '../../src/controllers/status-conditions.js';
import { waitFor } from '../../src/harness/wait.js';
import { runKubectl } from '../apiserver/helpers/kubectl-runner.js';
import { startControllerHarness, type ControllerHarness } from './controller-harness.js';

describe('namespace controller', () => {
  let h: ControllerHarness;
  let config = '';
  beforeAll(async () => {
    h = await startControllerHarness();
    const ts = h.server.ts;
    config = join(ts.dir, 'admin.kubeconfig');
    writeFileSync(config, renderKubeconfig({ server: ts.url, caPem: ts.ca.certPem, userName: 'admin', clientCertPem: ts.admin.certPem, clientKeyPem: ts.admin.keyPem }), { mode: 0o600 });
    h.start(namespaceControllerFactory);
  });
  afterAll(async () => {
    await h?.stop();
  });

  async function fill(ns: string): Promise<void> {
    await h.client(NAMESPACES).create({ metadata: { name: ns } });
    await h.client(CONFIGMAPS).create({ metadata: { name: 'c1', namespace: ns }, data: { a: '1' } });
    await h.client(SECRETS).create({ metadata: { name: 's1', namespace: ns } });
    await h.client(PODS).create({ metadata: { name: 'p1', namespace: ns }, spec: { containers: [{ name: 'c', image: 'x' }] } });
    const template = { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'x' }] } };
    await h.client(DEPLOYMENTS).create({ metadata: { name: 'd1', namespace: ns }, spec: { selector: { matchLabels: { app: 'a' } }, template } });
  }

  it('kubectl delete namespace finishes: content deleted, finalizer removed, namespace gone', async () => {
    await fill('doomed');
    const r = await runKubectl(config, join(h.server.ts.dir, 'home-1'), ['delete', 'namespace', 'doomed', '--timeout=60s']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('namespace "doomed" deleted');
    await expect(h.client(NAMESPACES).get('', 'doomed')).rejects.toSatisfy(isNotFound);
  });

  it('content with a finalizer keeps the namespace Terminating with the conditions that say so', async () => {
    await fill('held');
    await h.client(CONFIGMAPS).patch('held', 'c1', 'merge', { metadata: { finalizers: ['example.com/hold'] } });
    await h.client(NAMESPACES).delete('', 'held');
    const conditions = await waitFor('the content conditions', async () => {
      const ns = (await h.client(NAMESPACES).get('', 'held')) as KubeObject & { status?: { phase?: string; conditions?: StatusCondition[] } };
      const c = ns.status?.conditions ?? [];
      return c.find((x) => x.type === 'NamespaceFinalizersRemaining' && x.status === 'True') && ns.status?.phase === 'Terminating' ? c : undefined;
    });
    const byType = Object.fromEntries(conditions.map((c) => [c.type, c]));
    expect(byType['NamespaceDeletionDiscoveryFailure']).toMatchObject({ status: 'False', reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' });
    expect(byType['NamespaceDeletionContentFailure']).toMatchObject({ status: 'False', reason: 'ContentDeleted' });
    expect(byType['NamespaceContentRemaining']).toMatchObject({ status: 'True', reason: 'SomeResourcesRemain', message: 'Some resources are remaining: configmaps. has 1 resource instances' });
    expect(byType['NamespaceFinalizersRemaining']).toMatchObject({
      status: 'True',
      reason: 'SomeFinalizersRemain',
      message: 'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances',
    });
    expect((await h.client(PODS).list('held')).items).toEqual([]);
    await h.client(CONFIGMAPS).patch('held', 'c1', 'merge', { metadata: { finalizers: [] } });
    await waitFor('the namespace gone', async () => {
      try {
        await h.client(NAMESPACES).get('', 'held');
        return false;
      } catch (e) {
        if (isNotFound(e)) return true;
        throw e;
      }
    });
  });
});
