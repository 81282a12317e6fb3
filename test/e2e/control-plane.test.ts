// The HA control plane as users run it: three `setpoint server` members (store, API server, scheduler,
// controller manager each) sharing one cluster CA, on free ports, and an agent running pods as real
// processes. A Deployment of a small HTTP server converges and its pods answer on their own addresses;
// then the member whose controller manager leads is killed outright (its supervisor and every component,
// as a machine failure): the others take the Leases over (the takeover is printed), running pods are
// untouched, and a scale made right after is carried out.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopAdoptedPods } from '../../src/agent/stop-pods.js';
import { issueClientCert } from '../../src/apiserver/pki/certificates.js';
import { renderKubeconfig } from '../../src/apiserver/pki/kubeconfig.js';
import type { KubeObject } from '../../src/client/kube-object.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { DEPLOYMENTS, LEASES, PODS } from '../../src/client/resource-types.js';
import { RestClient } from '../../src/client/rest-client.js';
import { freePorts } from '../../src/harness/free-port.js';
import { readyz } from '../../src/harness/kinds/apiserver.js';
import { ManagedProcess } from '../../src/harness/managed-process.js';
import { childrenOf, serverMemberArgs } from '../../src/harness/server-members.js';
import { setpointMain } from '../../src/harness/setpoint-main.js';
import { waitFor } from '../../src/harness/wait.js';

interface Member {
  readonly name: string;
  readonly ports: { client: number; peer: number; api: number };
  readonly proc: ManagedProcess;
  /** Leader-election identities its loops logged, by component. */
  readonly identities: Map<string, string>;
}

function ready(p: KubeObject): boolean {
  const conds = (p.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
  return conds.some((c) => c.type === 'Ready' && c.status === 'True');
}

const HELLO = (replicas: number): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'hello', namespace: 'default' },
  spec: {
    replicas,
    selector: { matchLabels: { app: 'hello' } },
    template: {
      metadata: { labels: { app: 'hello' } },
      spec: {
        containers: [
          {
            name: 'hello',
            image: 'local/node',
            command: [process.execPath, '-e'],
            args: ["require('node:http').createServer((q, s) => s.end('hello from ' + process.env.POD_NAME)).listen(8080, process.env.POD_IP)"],
            env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
            readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 },
          },
        ],
      },
    },
  },
});

describe('three setpoint server members and an agent', () => {
  let dir: string;
  const members: Member[] = [];
  let agent: ManagedProcess | undefined;
  const clients: RestClient[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'control-plane-'));
    const ports = await Promise.all([0, 1, 2].map(() => freePorts(['client', 'peer', 'api'] as const)));
    const initial = ports.map((p, i) => `m${i + 1}=http://127.0.0.1:${p.peer}`).join(',');
    for (const [i, p] of ports.entries()) {
      const name = `m${i + 1}`;
      const identities = new Map<string, string>();
      const proc = new ManagedProcess(
        `setpoint server ${name}`,
        {
          bin: process.execPath,
          args: serverMemberArgs(dir, name, p, initial),
          env: { SETPOINT_LOG_FORMAT: 'json' },
        },
        {
          logFile: join(dir, `${name}.log`),
          onLine: (line) => {
            const m = /^(scheduler|controller-manager) (\{.*)$/.exec(line);
            if (!m || !m[2]) return;
            try {
              const o = JSON.parse(m[2]) as { identity?: string };
              if (o.identity) identities.set(m[1] ?? '', o.identity);
            } catch {
              // not a JSON line
            }
          },
        },
      );
      proc.start();
      members.push({ name, ports: p, proc, identities });
    }
    const caFile = join(dir, 'pki', 'ca.crt');
    for (const m of members) {
      await m.proc.waitReady('its API server ready', async () => {
        try {
          return (await readyz(m.ports.api, readFileSync(caFile, 'utf8'))) === 200;
        } catch {
          return false;
        }
      }, 180_000);
    }
  }, 240_000);

  afterAll(async () => {
    for (const c of clients) c.close();
    await agent?.kill('SIGKILL');
    if (dir) await stopAdoptedPods(join(dir, 'node-1')).catch(() => undefined);
    for (const m of members) {
      const pid = m.proc.pid;
      if (pid !== undefined) for (const c of childrenOf(pid)) process.kill(c, 'SIGKILL');
      await m.proc.kill('SIGKILL');
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('converges a Deployment on real processes, and carries on when the member leading the loops is killed', async () => {
    const ca = { certPem: readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8'), keyPem: readFileSync(join(dir, 'pki', 'ca.key'), 'utf8') };
    const admin = await issueClientCert(ca, { user: 'admin', groups: ['system:masters'] });
    const restOf = (m: Member): RestClient => {
      const c = new RestClient({ server: `https://127.0.0.1:${m.ports.api}`, tls: { ca: ca.certPem, cert: admin.certPem, key: admin.keyPem }, timeoutMs: 10_000 });
      clients.push(c);
      return c;
    };
    const leases = new ResourceClient(restOf(members[0]!), LEASES);
    const holder = async (name: string): Promise<string> => ((await leases.get('kube-system', name)).spec as { holderIdentity?: string }).holderIdentity ?? '';
    await waitFor('both loops to lead', async () => (await holder('kube-scheduler').catch(() => '')) !== '' && (await holder('kube-controller-manager').catch(() => '')) !== '', { timeoutMs: 90_000 });
    const cmHolder = await holder('kube-controller-manager');
    const victim = members.find((m) => m.identities.get('controller-manager') === cmHolder);
    expect(victim, `the member whose controller manager is ${cmHolder}`).toBeDefined();
    const survivor = members.find((m) => m !== victim)!;

    // One node, on a member that stays up, with its own node credentials and a /24 of pod addresses.
    const node = await issueClientCert(ca, { user: 'system:node:node-1', groups: ['system:nodes'] });
    const nodeKc = join(dir, 'node-1.kubeconfig');
    writeFileSync(nodeKc, renderKubeconfig({ server: `https://127.0.0.1:${survivor.ports.api}`, caPem: ca.certPem, userName: 'system:node:node-1', clientCertPem: node.certPem, clientKeyPem: node.keyPem }));
    agent = new ManagedProcess(
      'setpoint agent node-1',
      { bin: process.execPath, args: [setpointMain(), 'agent', `--kubeconfig=${nodeKc}`, '--node-name=node-1', `--root-dir=${join(dir, 'node-1')}`, '--port=0', `--pod-cidr=127.1.${200 + Math.floor(Math.random() * 50)}.0/24`], env: { SETPOINT_LOG_FORMAT: 'json' } },
      { logFile: join(dir, 'node-1.log') },
    );
    agent.start();

    const rest = restOf(survivor);
    const deployments = new ResourceClient(rest, DEPLOYMENTS);
    const pods = new ResourceClient(rest, PODS);
    await deployments.create(HELLO(2));
    const readyPods = async (): Promise<KubeObject[]> => (await pods.list('default', { labelSelector: 'app=hello' })).items.filter((p) => ready(p) && !p.metadata?.deletionTimestamp);
    await waitFor('two hello pods Ready', async () => (await readyPods()).length === 2, { timeoutMs: 120_000, detail: () => agent?.logTail(5) ?? '' });
    const before = await readyPods();
    for (const p of before) {
      const ip = (p.status as { podIP: string }).podIP;
      const res = await fetch(`http://${ip}:8080/`);
      expect(await res.text()).toBe(`hello from ${p.metadata?.name}`);
    }

    // The member leading the controller manager dies with all its components, as a machine would.
    const pid = victim!.proc.pid!;
    const components = childrenOf(pid);
    process.kill(pid, 'SIGKILL');
    for (const c of components) process.kill(c, 'SIGKILL');
    const killedAt = performance.now();
    const survivorLeases = new ResourceClient(rest, LEASES);
    const newHolder = async (name: string): Promise<string> => ((await survivorLeases.get('kube-system', name)).spec as { holderIdentity?: string }).holderIdentity ?? '';
    await deployments.patchScale('default', 'hello', 3).catch(async () => {
      // The API server may be catching up with the store's new leader: try again.
      await waitFor('the scale to land', async () => deployments.patchScale('default', 'hello', 3).then(() => true, () => false));
    });
    await waitFor('another controller manager to lead', async () => {
      const h = await newHolder('kube-controller-manager').catch(() => cmHolder);
      return h !== cmHolder && h !== '';
    }, { timeoutMs: 30_000 });
    const takeoverS = (performance.now() - killedAt) / 1000;
    console.log(`controller-manager lease taken over ${takeoverS.toFixed(2)} s after the member was killed`);
    await waitFor('three hello pods Ready after the scale', async () => (await readyPods()).length === 3, { timeoutMs: 120_000 });
    const after = await readyPods();
    // Running pods untouched: the same pods, never restarted.
    for (const p of before) {
      const same = after.find((a) => a.metadata?.uid === p.metadata?.uid);
      expect(same, `pod ${p.metadata?.name} still there`).toBeDefined();
      const statuses = (same!.status as { containerStatuses?: { restartCount: number }[] }).containerStatuses ?? [];
      expect(statuses.map((s) => s.restartCount)).toEqual([0]);
    }
  }, 420_000);
});
