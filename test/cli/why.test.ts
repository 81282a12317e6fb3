// `setpoint why` end to end: objects created through a real API server on etcd 3.4, with the conditions,
// events and owner references a controller, the scheduler or a node agent would write set by the test
// itself (those loops are not under test here), and the real admission history the registry records. The
// real `setpoint` process answers, with only the kubeconfig (history through the API server's history
// subresource, no store access); its text and its -o json are asserted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRegistryServer, type RegistryServer } from '../apiserver/registry/registry-server.js';
import { cliRunner, type CliRunner } from './helpers/cli-runner.js';

const FIT_ERROR = '0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.';
const DENIAL = 'admission webhook "images.example.com" denied the request: images must come from registry.example.com';

interface Meta {
  metadata: { uid: string; name: string };
}

interface JsonReport {
  converged: boolean;
  verdict: string;
  historyRead: boolean;
  causes: { ref: { kind: string; name: string }; alike: number; finding: { severity: string; source: string; summary: string; evidence: { who?: string; time?: string; count?: number } } }[];
  tree: { ref: { kind: string }; findings: { source: string; summary: string; severity: string }[]; children: { ref: { kind: string; name: string }; alike?: string[]; children: { ref: { kind: string; name: string }; alike?: string[] }[] }[] };
}

describe('setpoint why', () => {
  let s: RegistryServer;
  let cli: CliRunner;
  const ago = (ms: number): string => new Date(Date.now() - ms).toISOString().replace(/\.\d+Z$/, 'Z');

  async function call(method: string, path: string, body?: unknown, contentType = 'application/merge-patch+json'): Promise<Meta> {
    const r = await s.call(method, path, body, method === 'PATCH' ? { 'content-type': contentType } : {});
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.body}`);
    return JSON.parse(r.body) as Meta;
  }
  const status = (path: string, st: unknown): Promise<Meta> => call('PATCH', `${path}/status`, { status: st });
  const event = (name: string, kind: string, obj: Meta, type: string, reason: string, message: string, component: string, count = 1): Promise<Meta> =>
    call('POST', '/api/v1/namespaces/default/events', {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name },
      involvedObject: { kind, name: obj.metadata.name, namespace: 'default', uid: obj.metadata.uid },
      type,
      reason,
      message,
      count,
      firstTimestamp: ago(600_000),
      lastTimestamp: ago(30_000),
      source: { component },
    });
  const owner = (kind: string, o: Meta): unknown => [{ apiVersion: kind === 'Deployment' ? 'apps/v1' : 'apps/v1', kind, name: o.metadata.name, uid: o.metadata.uid, controller: true }];
  const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27', resources: { requests: { cpu: '2' } } }] } };

  beforeAll(async () => {
    s = await startRegistryServer('etcd');
    cli = cliRunner(s);

    // Deployment web → ReplicaSet web-7d4 → pods web-7d4-a, web-7d4-b (unschedulable), and a third pod the webhook refused.
    const dep = await call('POST', '/apis/apps/v1/namespaces/default/deployments', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template } });
    await status('/apis/apps/v1/namespaces/default/deployments/web', {
      observedGeneration: 1,
      replicas: 2,
      updatedReplicas: 2,
      unavailableReplicas: 3,
      conditions: [
        { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable', message: 'Deployment does not have minimum availability.', lastTransitionTime: ago(900_000), lastUpdateTime: ago(900_000) },
        { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'ReplicaSet "web-7d4" has timed out progressing.', lastTransitionTime: ago(300_000), lastUpdateTime: ago(300_000) },
      ],
    });
    const rs = await call('POST', '/apis/apps/v1/namespaces/default/replicasets', {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'web-7d4', ownerReferences: owner('Deployment', dep) },
      spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template },
    });
    await status('/apis/apps/v1/namespaces/default/replicasets/web-7d4', {
      observedGeneration: 1,
      replicas: 2,
      conditions: [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: DENIAL, lastTransitionTime: ago(240_000) }],
    });
    await event('web-7d4.1', 'ReplicaSet', rs, 'Warning', 'FailedCreate', `Error creating: ${DENIAL}`, 'replicaset-controller', 7);
    for (const p of ['web-7d4-a', 'web-7d4-b']) {
      const pod = await call('POST', '/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: p, labels: { app: 'web' }, ownerReferences: owner('ReplicaSet', rs) }, spec: template.spec });
      await status(`/api/v1/namespaces/default/pods/${p}`, { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: FIT_ERROR, lastTransitionTime: ago(280_000) }] });
      await event(`${p}.1`, 'Pod', pod, 'Warning', 'FailedScheduling', FIT_ERROR, 'default-scheduler', 4);
    }

    // A deployment whose spec changed after its controller last looked.
    await call('POST', '/apis/apps/v1/namespaces/default/deployments', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'api' }, spec: { replicas: 1, selector: { matchLabels: { app: 'api' } }, template: { ...template, metadata: { labels: { app: 'api' } } } } });
    await status('/apis/apps/v1/namespaces/default/deployments/api', { observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 });
    await call('PATCH', '/apis/apps/v1/namespaces/default/deployments/api', { spec: { replicas: 2 } });

    // A running pod on a node whose agent stopped renewing Ready.
    await call('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
    await status('/api/v1/nodes/n1', { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'agent is posting ready status', lastHeartbeatTime: ago(180_000), lastTransitionTime: ago(3_600_000) }] });
    await call('POST', '/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'db' }, spec: { nodeName: 'n1', containers: [{ name: 'db', image: 'postgres' }] } });
    await status('/api/v1/namespaces/default/pods/db', { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: ago(3_000_000) }] });
    // A write the API server refused (recorded in the pod's history): an invalid label.
    const refused = await s.call('PATCH', '/api/v1/namespaces/default/pods/db', { metadata: { labels: { tier: '-bad-' } } }, { 'content-type': 'application/merge-patch+json' });
    expect(refused.status).toBe(422);
  }, 180_000);
  afterAll(async () => {
    await s?.stop();
  });

  it('points a Deployment that is not available at its ReplicaSet\'s webhook denial and its pods\' FitError', async () => {
    const out = await cli.ok('why', 'deployment/web');
    const lines = out.split('\n');
    expect(lines[0]).toBe('Deployment default/web is not converging (0/3 available, 2 updated, 2 total), because:');
    expect(lines[1]).toBe(`  ✗ Pod default/web-7d4-a (and 1 more alike): PodScheduled=False Unschedulable: ${FIT_ERROR}`);
    expect(lines[2]).toBe(`  ✗ ReplicaSet default/web-7d4: ReplicaFailure=True FailedCreate: ${DENIAL}`);
    expect(out).toMatch(/^ {3}✗ Progressing=False ProgressDeadlineExceeded: ReplicaSet "web-7d4" has timed out progressing\. {2}\[\S+Z \(5m ago\), by deployment-controller\]$/m);
    expect(out).toMatch(/^ {2}└─ ReplicaSet default\/web-7d4: 0\/3 ready, 2 created \(not converged\)$/m);
    // The denial event repeats the condition's message: folded into its evidence (who, how often), not said twice.
    expect(out).toMatch(/ReplicaFailure=True FailedCreate: .*\[\S+ \(\d+s ago\), by replicaset-controller, x7\]$/m);
    expect(out).toMatch(/^ {5}└─ Pod default\/web-7d4-a: Pending, 0\/1 containers ready \(not converged\) — and 1 more alike: web-7d4-b$/m);
    expect(out).toMatch(/PodScheduled=False Unschedulable: 0\/3 nodes .*by default-scheduler, x4\]$/m);
    // The history comes through the API server's history subresource: no store address is needed.
    expect(out).not.toContain('admission history not read');
    expect(out).toMatch(/· spec mutated by the system on CREATE by admin: defaulting \(defaults\)/);
  });

  it('says which defaulter changed which fields, from the registry\'s history records', async () => {
    const out = await cli.ok('why', 'pod/web-7d4-a');
    const mutated = out.split('\n').find((l) => l.includes('spec mutated by the system')) ?? '';
    expect(mutated).toMatch(/^ {3}· spec mutated by the system on CREATE by admin: defaulting \(defaults\) set [^;]*spec\.restartPolicy/);
    // The admission chain's own records: which built-in plugin set which field.
    expect(mutated).toContain('; mutating plugin DefaultTolerationSeconds set spec.tolerations');
    expect(mutated).toMatch(/\[\S+ \(\d+s ago\), by defaults, [^\]]*DefaultTolerationSeconds[^\]]*\]$/);
    expect(out).toContain('· controlled by ReplicaSet web-7d4');
    expect(out).not.toContain('admission history not read');
  });

  it('names the stale status: observedGeneration behind generation, with when the spec changed', async () => {
    const out = await cli.ok('why', 'deploy/api');
    expect(out.split('\n')[0]).toBe('Deployment default/api is not converging (1/2 available, 1 updated, 1 total), because:');
    expect(out).toMatch(/! status is stale: observedGeneration 1 < generation 2: the deployment controller has not acted on the latest spec change \(spec last written \S+Z\)/);
  });

  it('blames a running pod\'s node when its Ready condition is no longer renewed, and shows a refused write', async () => {
    const out = await cli.ok('why', 'pod/db');
    expect(out.split('\n')[0]).toBe('Pod default/db is not converging (Running, 0/1 containers ready), because:');
    expect(out).toMatch(/✗ Node n1: Ready=True is stale: not renewed for 1\d\ds \(grace 40s\): the node agent stopped reporting/);
    expect(out).toMatch(/✗ UPDATE refused: Pod "db" is invalid: metadata\.labels: Invalid value: "-bad-".*by admin\]$/m);
  });

  it('counts a node alive while its Lease is renewed, even when the Ready heartbeat is old', async () => {
    await call('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n2' } });
    await status('/api/v1/nodes/n2', { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: ago(300_000), lastTransitionTime: ago(3_600_000) }] });
    const renew = new Date(Date.now() - 5_000).toISOString().replace('Z', '000Z');
    await call('POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'n2' }, spec: { holderIdentity: 'n2', leaseDurationSeconds: 40, renewTime: renew } });
    expect((await cli.ok('why', 'node/n2')).split('\n')[0]).toBe('Node n2 is converged (Ready).');
  });

  it('answers -o json for machines', async () => {
    const r = JSON.parse(await cli.ok('why', 'deployment/web', '-o', 'json')) as JsonReport;
    expect(r.converged).toBe(false);
    expect(r.historyRead).toBe(true);
    expect(r.causes.map((c) => [c.ref.kind, c.ref.name, c.alike, c.finding.source, c.finding.evidence.who])).toEqual([
      ['Pod', 'web-7d4-a', 1, 'condition', 'default-scheduler'],
      ['ReplicaSet', 'web-7d4', 0, 'condition', 'replicaset-controller'],
    ]);
    expect(r.tree.children[0]?.ref).toEqual({ kind: 'ReplicaSet', namespace: 'default', name: 'web-7d4' });
    expect(r.tree.children[0]?.children[0]?.alike).toEqual(['web-7d4-b']);
    expect(r.tree.findings.map((f) => f.source)).toEqual(['condition', 'condition', 'admission']);
  });

  it('says a converged object is converged, and a missing one as the server does', async () => {
    await s.call('PATCH', '/api/v1/nodes/n1/status', { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: ago(0), lastTransitionTime: ago(3_600_000) }] } }, { 'content-type': 'application/merge-patch+json' });
    expect((await cli.ok('why', 'node/n1')).split('\n')[0]).toBe('Node n1 is converged (Ready).');
    const missing = await cli.run(['why', 'pod/nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('Error from server (NotFound): pods "nope" not found\n');
    const bad = await cli.run(['why', 'web']);
    expect(bad.stderr).toMatch(/^error: arguments in resource\/name form are required/);
  });
});

describe('setpoint why on an API server without the history subresource', () => {
  let s: RegistryServer;
  beforeAll(async () => {
    s = await startRegistryServer('etcd', '/registry', {}, { historySubresource: false });
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
  });

  it('still answers, and says the history was not read', async () => {
    const made = await s.call('POST', '/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
    expect(made.status, made.body).toBe(201);
    const cli = cliRunner(s);
    const out = await cli.ok('why', 'pod/p');
    expect(out.split('\n')[0]).toMatch(/^Pod default\/p is not converging \(Pending/);
    expect(out).toContain('(admission history not read: the API server did not serve the history subresource');
    expect(out).not.toContain('spec mutated by the system');
    const r = JSON.parse(await cli.ok('why', 'pod/p', '-o', 'json')) as JsonReport;
    expect(r.historyRead).toBe(false);
  });
});
