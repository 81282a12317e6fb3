// Admission webhooks end to end: a real API server on a real etcd 3.4 calls a real HTTPS webhook in this
// process. Allow, deny (with the webhook's Status), patch, warnings, timeouts, garbage, an unreachable
// webhook and a service reference, each under failurePolicy Fail and Ignore; rules, namespace and object
// selectors; dry runs; the records each call leaves; and kubectl's error line for a denial.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HistoryDocument } from '../../../src/apiserver/registry/history.js';
import { freePort } from '../../../src/harness/free-port.js';
import { waitFor } from '../../../src/harness/wait.js';
import { json } from '../helpers/clients.js';
import { startRegistryServer, type RegistryServer } from '../registry/registry-server.js';
import { startWebhookServer, type WebhookServer } from '../../../src/harness/webhook-server.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const GROUP = 'admissionregistration.k8s.io';

const pod = (name: string, labels: Record<string, string> = { app: 'web' }): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels },
  spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] },
});

describe('admission webhooks', () => {
  let s: RegistryServer;
  let hooks: WebhookServer;
  let n = 0;

  beforeAll(async () => {
    [s, hooks] = await Promise.all([startRegistryServer('etcd'), startWebhookServer()]);
  });
  afterAll(async () => {
    await Promise.all([s?.stop(), hooks?.stop()]);
  });

  /** A namespace whose label only this test's webhooks select, so tests do not see each other's hooks. */
  async function scoped(): Promise<{ ns: string; selector: Obj }> {
    const tag = `t${n++}`;
    const ns = await s.namespace('wh', { hooks: tag });
    return { ns, selector: { matchLabels: { hooks: tag } } };
  }

  /** Makes a configuration and waits until the API server's cache (what admission reads) has it. */
  async function configure(kind: 'Mutating' | 'Validating', name: string, webhooks: Obj[]): Promise<void> {
    const resource = `${kind.toLowerCase()}webhookconfigurations`;
    const body = { apiVersion: `${GROUP}/v1`, kind: `${kind}WebhookConfiguration`, metadata: { name }, webhooks };
    const r = await s.call('POST', `/apis/${GROUP}/v1/${resource}`, body);
    expect(r.status, r.body).toBe(201);
    const rv = json<Obj>(r).metadata.resourceVersion as string;
    const store = s.api.store(GROUP, resource);
    if (!store) throw new Error(`no store for ${resource}`);
    await waitFor(`${name} in the watch cache`, async () => {
      const l = await store.storage.list(store.listPrefix(''), { resourceVersion: '0' });
      return l.items.some((o) => o.metadata.name === name && Number(o.metadata.resourceVersion) >= Number(rv));
    });
  }

  function hook(name: string, path: string, selector: Obj, extra: Obj = {}): Obj {
    return {
      name,
      clientConfig: { url: hooks.url(path), caBundle: hooks.caBundle },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
      namespaceSelector: selector,
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      ...extra,
    };
  }

  async function history(ns: string, name: string): Promise<HistoryDocument> {
    return (await s.api.ctx.raw.get(`/registry/setpoint.io/history/pods/${ns}/${name}`)) as HistoryDocument;
  }

  it('a validating webhook that allows sees an AdmissionReview v1 of the request and leaves a record', async () => {
    const { ns, selector } = await scoped();
    await configure('Validating', `allow-${ns}`, [hook('allow.example.com', '/allow', selector)]);
    const before = hooks.reviews.length;
    const r = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, pod('a'));
    expect(r.status, r.body).toBe(201);
    const seen = hooks.reviews.slice(before).find((x) => x.review.request?.namespace === ns);
    expect(seen?.review).toMatchObject({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        kind: { group: '', version: 'v1', kind: 'Pod' },
        resource: { group: '', version: 'v1', resource: 'pods' },
        name: 'a',
        namespace: ns,
        operation: 'CREATE',
        userInfo: { username: 'admin', groups: ['system:masters', 'system:authenticated'] },
        object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a' } },
        oldObject: null,
        dryRun: false,
        options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
      },
    });
    expect(seen?.review.request.uid).toMatch(/^[0-9a-f-]{36}$/);
    const records = (await history(ns, 'a')).entries[0]?.records ?? [];
    expect(records.at(-1)).toMatchObject({ stage: 'validating', plugin: 'allow.example.com', allowed: true, changedPaths: [] });
  });

  it('a denial answers the webhook\'s Status under Kubernetes\' words, and is recorded', async () => {
    const { ns, selector } = await scoped();
    await configure('Validating', `deny-${ns}`, [hook('deny.example.com', '/deny', selector), hook('bare.example.com', '/deny-bare', selector, { rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] })]);
    const r = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, pod('a'));
    expect(r.status).toBe(403);
    expect(json(r)).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Forbidden', code: 403, message: 'admission webhook "deny.example.com" denied the request: no pods here' });
    const entry = (await history(ns, 'a')).entries[0];
    expect(entry).toMatchObject({ allowed: false, message: 'admission webhook "deny.example.com" denied the request: no pods here' });
    expect(entry?.records.at(-1)).toMatchObject({ stage: 'validating', plugin: 'deny.example.com', allowed: false });
    const bare = await s.call('POST', `/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } });
    expect(bare.status).toBe(400);
    expect(json(bare).message).toBe('admission webhook "bare.example.com" denied the request without explanation');
  });

  it('a mutating webhook\'s JSON patch lands, its changed paths recorded, and its warnings reach the client', async () => {
    const { ns, selector } = await scoped();
    await configure('Mutating', `patch-${ns}`, [hook('patch.example.com', '/patch', selector), hook('warn.example.com', '/warn', selector), hook('sidecar.example.com', '/sidecar', selector)]);
    const r = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, pod('a'));
    expect(r.status, r.body).toBe(201);
    expect(json<Obj>(r).metadata.labels).toEqual({ app: 'web', patched: 'yes' });
    // The container a webhook added is defaulted like one the client sent.
    expect(json<Obj>(r).spec.containers[1]).toMatchObject({ name: 'sidecar', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File' });
    expect(r.headers['warning']).toBe('299 - "careful: this is a test"');
    const records = (await history(ns, 'a')).entries[0]?.records ?? [];
    expect(records.filter((x) => x.stage === 'mutating' && x.plugin.endsWith('.example.com'))).toMatchObject([
      { plugin: 'patch.example.com', allowed: true, changedPaths: ['metadata.labels.patched'] },
      { plugin: 'warn.example.com', allowed: true, changedPaths: [] },
      { plugin: 'sidecar.example.com', allowed: true, changedPaths: ['spec.containers'] },
    ]);
  });

  it('reinvocationPolicy IfNeeded calls a webhook once more when a later one changed the object', async () => {
    const { ns, selector } = await scoped();
    await configure('Mutating', `reinvoke-${ns}`, [
      hook('first.example.com', '/allow', selector, { reinvocationPolicy: 'IfNeeded' }),
      hook('never.example.com', '/allow', selector),
      hook('changer.example.com', '/patch', selector),
    ]);
    const r = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, pod('a'));
    expect(r.status, r.body).toBe(201);
    const records = ((await history(ns, 'a')).entries[0]?.records ?? []).filter((x) => x.plugin.endsWith('.example.com'));
    expect(records.map((x) => [x.plugin, x.message ?? ''])).toEqual([
      ['first.example.com', ''],
      ['never.example.com', ''],
      ['changer.example.com', ''],
      ['first.example.com', 'reinvoked (reinvocationPolicy IfNeeded)'],
    ]);
  });

  it('timeouts, garbage, a wrong uid, an unreachable webhook and a service reference fail closed under Fail', async () => {
    const { ns, selector } = await scoped();
    const closed = await freePort();
    const cases: [string, Obj, string][] = [
      ['slow.example.com', { clientConfig: { url: hooks.url('/slow'), caBundle: hooks.caBundle }, timeoutSeconds: 1 }, `failed to call webhook: Post "${hooks.url('/slow')}?timeout=1s": context deadline exceeded`],
      ['garbage.example.com', { clientConfig: { url: hooks.url('/garbage'), caBundle: hooks.caBundle } }, "failed to call webhook: couldn't get version/kind; json parse error:"],
      ['uid.example.com', { clientConfig: { url: hooks.url('/wrong-uid'), caBundle: hooks.caBundle } }, 'received invalid webhook response: expected response.uid='],
      ['gone.example.com', { clientConfig: { url: `https://127.0.0.1:${closed}/x` } }, `dial tcp 127.0.0.1:${closed}: connect: connection refused`],
      ['svc.example.com', { clientConfig: { service: { namespace: 'default', name: 'hooks' } } }, 'clientConfig.service (default/hooks) is not supported by Setpoint: give clientConfig.url'],
      ['untrusted.example.com', { clientConfig: { url: hooks.url('/allow') } }, 'failed to call webhook: Post'],
    ];
    for (const [name, extra, words] of cases) {
      const label = name.split('.')[0] ?? name;
      await configure('Validating', `fail-${label}-${ns}`, [hook(name, '/allow', { matchLabels: { ...selector.matchLabels } }, { ...extra, objectSelector: { matchLabels: { case: label } } })]);
      const r = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, pod(`p-${label}`, { case: label }));
      expect(r.status, `${name}: ${r.body}`).toBe(500);
      const st = json<Obj>(r);
      expect(st.reason).toBe('InternalError');
      expect(st.message).toContain(`Internal error occurred: failed calling webhook "${name}": `);
      expect(st.message).toContain(words);
    }
  });

  it('the same failures are ignored under Ignore, and the record says so', async () => {
    const { ns, selector } = await scoped();
    const closed = await freePort();
    await configure('Mutating', `ignore-${ns}`, [
      hook('slow.example.com', '/slow', selector, { timeoutSeconds: 1, failurePolicy: 'Ignore' }),
      hook('gone.example.com', '/x', selector, { clientConfig: { url: `https://127.0.0.1:${closed}/x` }, failurePolicy: 'Ignore' }),
      hook('garbage.example.com', '/garbage', selector, { failurePolicy: 'Ignore' }),
    ]);
    const r = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, pod('a'));
    expect(r.status, r.body).toBe(201);
    const records = (await history(ns, 'a')).entries[0]?.records ?? [];
    const ignored = records.filter((x) => x.plugin.endsWith('.example.com'));
    expect(ignored.map((x) => [x.plugin, x.allowed])).toEqual([
      ['slow.example.com', true],
      ['gone.example.com', true],
      ['garbage.example.com', true],
    ]);
    expect(ignored[0]?.message).toMatch(/^failed calling webhook "slow.example.com": .*context deadline exceeded \(ignored: failurePolicy Ignore\)$/);
    expect(ignored[0]?.latencyMs).toBeGreaterThan(0);
  });

  it('rules (subresources, operations) and the object selector decide who is called', async () => {
    const { ns, selector } = await scoped();
    await configure('Validating', `rules-${ns}`, [
      hook('status-only.example.com', '/deny', selector, { rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['pods/status'] }] }),
      hook('labelled.example.com', '/deny', selector, { objectSelector: { matchExpressions: [{ key: 'guarded', operator: 'Exists' }] } }),
      hook('deletes.example.com', '/deny', selector, { rules: [{ operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['*'] }] }),
    ]);
    const free = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, pod('free'));
    expect(free.status, free.body).toBe(201);
    const guarded = await s.call('POST', `/api/v1/namespaces/${ns}/pods`, pod('g', { guarded: 'yes' }));
    expect(guarded.status).toBe(403);
    expect(json(guarded).message).toBe('admission webhook "labelled.example.com" denied the request: no pods here');
    const status = await s.call('PATCH', `/api/v1/namespaces/${ns}/pods/free/status`, { status: { message: 'x' } }, { 'content-type': 'application/merge-patch+json' });
    expect(status.status).toBe(403);
    expect(json(status).message).toBe('admission webhook "status-only.example.com" denied the request: no pods here');
    const del = await s.call('DELETE', `/api/v1/namespaces/${ns}/pods/free`);
    expect(del.status).toBe(403);
    expect(json(del).message).toBe('admission webhook "deletes.example.com" denied the request: no pods here');
    // Another namespace (no matching label) is not this webhook's business.
    const other = await s.namespace('wh-other');
    const elsewhere = await s.call('POST', `/api/v1/namespaces/${other}/pods`, pod('g', { guarded: 'yes' }));
    expect(elsewhere.status, elsewhere.body).toBe(201);
  });

  it('dry runs reach webhooks with dryRun set, are refused the same way, and store nothing', async () => {
    const { ns, selector } = await scoped();
    await configure('Validating', `dry-${ns}`, [hook('dry.example.com', '/deny', selector, { sideEffects: 'NoneOnDryRun' })]);
    const before = hooks.reviews.length;
    const r = await s.call('POST', `/api/v1/namespaces/${ns}/pods?dryRun=All`, pod('a'));
    expect(r.status).toBe(403);
    expect(hooks.reviews.slice(before).find((x) => x.review.request?.namespace === ns)?.review.request.dryRun).toBe(true);
    await expect(s.api.ctx.raw.get(`/registry/setpoint.io/history/pods/${ns}/a`)).rejects.toMatchObject({ code: 'NotFound' });
    // A webhook with side effects cannot be configured through v1 at all.
    const some = await s.call('POST', `/apis/${GROUP}/v1/validatingwebhookconfigurations`, {
      apiVersion: `${GROUP}/v1`, kind: 'ValidatingWebhookConfiguration', metadata: { name: `some-${ns}` }, webhooks: [hook('some.example.com', '/allow', selector, { sideEffects: 'Some' })],
    });
    expect(some.status).toBe(422);
    expect(json(some).message).toContain('webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"');
  });

  it('kubectl prints Kubernetes\' line for a denied create', async () => {
    const { ns, selector } = await scoped();
    await configure('Validating', `kubectl-${ns}`, [hook('deny.example.com', '/deny', selector)]);
    const dir = s.ts.dir;
    const file = join(dir, 'pod.yaml');
    writeFileSync(file, `apiVersion: v1\nkind: Pod\nmetadata:\n  name: k\nspec:\n  containers:\n  - name: c\n    image: busybox:1.36\n`);
    const r = await s.kubectl('create', '-n', ns, '-f', file);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(`Error from server (Forbidden): error when creating "${file}": admission webhook "deny.example.com" denied the request: no pods here`);
  });
});
