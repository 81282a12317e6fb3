// `setpoint agent` as a process on `setpoint apiserver` on a real etcd (dist/: build first): the Node it
// registers and the Lease it renews; pods bound to it (spec.nodeName set, no scheduler) run as real
// processes with their status, events, restarts, crash loops, graceful deletion, and adoption by the next
// agent; bad input is a waiting reason or an event, never a crashed agent.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isNotFound, type ApiStatusError } from '../../src/client/api-status-error.js';
import { loadKubeconfig } from '../../src/client/kubeconfig.js';
import { RestClient } from '../../src/client/rest-client.js';
import type { KubeObject } from '../../src/client/kube-object.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { EVENTS, LEASES, NODES, PODS } from '../../src/client/resource-types.js';
import { waitFor } from '../../src/harness/wait.js';
import { runKubectl, spawnKubectl } from '../apiserver/helpers/kubectl-runner.js';
import { AgentCluster, kill } from './helpers/agent-cluster.js';

const NODE = 'agent-e2e-1';

type Obj = KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };

interface CStatus {
  name: string;
  restartCount: number;
  ready: boolean;
  containerID?: string;
  state: { running?: unknown; waiting?: { reason?: string; message?: string }; terminated?: { exitCode: number } };
  lastState: { terminated?: { exitCode: number; reason?: string } };
}

const NODEJS = process.execPath;
// Answers its own pid on POD_IP:8080; MARK lets the test count its processes.
const SERVER = `require('http').createServer((q, s) => s.end(String(process.pid))).listen(8080, process.env.POD_IP)`;

function containerStatus(p: Obj | undefined, name = 'c'): CStatus | undefined {
  return ((p?.status?.['containerStatuses'] ?? []) as CStatus[]).find((x) => x.name === name);
}

/** Processes on this host whose command line holds `marker` (a pod's, however many agents ran it). */
function processesWith(marker: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(join('/proc', d, 'cmdline'), 'utf8').includes(marker)) out.push(Number(d));
    } catch {
      // gone
    }
  }
  return out;
}

describe('setpoint agent', () => {
  let c: AgentCluster;
  let nodes: ResourceClient<Obj>;
  let leases: ResourceClient<Obj>;
  let pods: ResourceClient<Obj>;
  let events: ResourceClient<Obj>;

  function podOf(name: string, spec: Record<string, unknown>): Obj {
    return { metadata: { name, namespace: 'default' }, spec: { nodeName: NODE, terminationGracePeriodSeconds: 2, ...spec } };
  }
  async function waitPod(name: string, what: string, ok: (p: Obj) => boolean, timeoutMs = 60_000): Promise<Obj> {
    let last: Obj | undefined;
    return waitFor(what, async () => {
      last = await pods.get('default', name).catch(() => undefined);
      return last !== undefined && ok(last) ? last : undefined;
    }, { timeoutMs, detail: () => JSON.stringify(last?.status) });
  }
  async function eventsOf(name: string): Promise<{ reason: string; message: string; type: string }[]> {
    const l = await events.list('default', { fieldSelector: `involvedObject.name=${name}` });
    return l.items as unknown as { reason: string; message: string; type: string }[];
  }
  async function waitEvent(name: string, reason: string, timeoutMs = 60_000): Promise<{ reason: string; message: string }> {
    return waitFor(`a ${reason} event for ${name}`, async () => (await eventsOf(name)).find((e) => e.reason === reason), { timeoutMs });
  }
  async function httpGet(url: string): Promise<string> {
    const r = await fetch(url);
    return r.text();
  }

  beforeAll(async () => {
    c = await AgentCluster.start();
    nodes = new ResourceClient<Obj>(c.admin, NODES);
    leases = new ResourceClient<Obj>(c.admin, LEASES);
    pods = new ResourceClient<Obj>(c.admin, PODS);
    events = new ResourceClient<Obj>(c.admin, EVENTS);
    await c.startAgent(NODE, ['--node-labels', 'tier=test', '--register-with-taints', 'dedicated=agents:NoSchedule']);
  }, 120_000);
  afterAll(async () => {
    await c?.stop();
  }, 60_000);

  it('registers its Node, Ready with kubelet reasons, and renews its Lease in kube-node-lease', async () => {
    const node = await waitFor('the node to be Ready', async () => {
      const n = await nodes.get('', NODE).catch(() => undefined);
      const conds = (n?.status?.['conditions'] ?? []) as { type: string; status: string }[];
      return conds.some((x) => x.type === 'Ready' && x.status === 'True') ? n : undefined;
    });
    expect(node.metadata?.labels).toMatchObject({ 'kubernetes.io/hostname': NODE, 'kubernetes.io/os': 'linux', tier: 'test' });
    expect(node.metadata?.labels?.['kubernetes.io/arch']).toMatch(/^(amd64|arm64)$/);
    expect(node.spec?.['taints']).toEqual([{ key: 'dedicated', value: 'agents', effect: 'NoSchedule' }]);
    const st = node.status as {
      capacity: Record<string, string>;
      allocatable: Record<string, string>;
      conditions: { type: string }[];
      addresses: unknown[];
      daemonEndpoints: { kubeletEndpoint: { Port: number } };
      nodeInfo: Record<string, string>;
    };
    expect(st.capacity).toMatchObject({ pods: '110' });
    expect(Number(st.allocatable['cpu'])).toBeGreaterThan(0);
    const byType = Object.fromEntries(st.conditions.map((x) => [x.type, x]));
    expect(byType['Ready']).toMatchObject({ status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' });
    expect(byType['MemoryPressure']).toMatchObject({ reason: expect.stringMatching(/^KubeletHas/) });
    expect(Object.keys(byType).sort()).toEqual(['DiskPressure', 'MemoryPressure', 'PIDPressure', 'Ready']);
    expect(st.addresses).toContainEqual({ type: 'InternalIP', address: '127.0.0.1' });
    expect(st.daemonEndpoints.kubeletEndpoint.Port).toBeGreaterThan(0);
    expect(st.nodeInfo).toMatchObject({ operatingSystem: 'linux' });

    const lease = await waitFor('the node lease', () => leases.get('kube-node-lease', NODE).catch(() => undefined));
    expect(lease.spec).toMatchObject({ holderIdentity: NODE, leaseDurationSeconds: 40 });
    expect(lease.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Node', name: NODE, uid: node.metadata?.uid });
    // The status heartbeat moves on (every --node-status-update-frequency, 2 s here).
    const beat = (n: Obj): string => ((n.status?.['conditions'] ?? []) as { type: string; lastHeartbeatTime: string }[]).find((x) => x.type === 'Ready')?.lastHeartbeatTime ?? '';
    // As system:node:<name> it may write only its own Node (the node authorizer).
    const asNode = new ResourceClient<Obj>(new RestClient(loadKubeconfig({ path: await c.nodeKubeconfig(NODE) }).config), NODES);
    const denied = await asNode.patchStatus('', 'some-other-node', 'merge', { status: {} }).then(() => undefined, (e: unknown) => e as ApiStatusError);
    expect(denied?.status.code).toBe(403);
    expect(denied?.status.message).toContain(`node '${NODE}' cannot modify node 'some-other-node'`);
    const first = beat(node);
    await waitFor('a later heartbeat', async () => beat(await nodes.get('', NODE)) !== first, { timeoutMs: 30_000 });
  });

  let serverPid = 0;
  let serverIP = '';

  it('runs a pod bound to it: Running and Ready with its podIP, answering on POD_IP, with kubelet events', async () => {
    await pods.create(
      podOf('web', {
        containers: [{ name: 'c', image: 'local', command: [NODEJS, '-e', SERVER, 'MARK-web'], readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 } }],
      }),
    );
    const p = await waitPod('web', 'web to be Ready', (x) => ((x.status?.['conditions'] ?? []) as { type: string; status: string }[]).some((k) => k.type === 'Ready' && k.status === 'True'));
    const st = p.status as { phase: string; podIP: string; podIPs: { ip: string }[]; hostIP: string; startTime: string; conditions: { type: string; status: string }[] };
    expect(st.phase).toBe('Running');
    expect(st.podIP.startsWith(c.podCidr.split('.').slice(0, 3).join('.') + '.')).toBe(true);
    expect(st.podIPs).toEqual([{ ip: st.podIP }]);
    expect(st.hostIP).toBe('127.0.0.1');
    expect(st.startTime).toMatch(/Z$/);
    expect(st.conditions.map((k) => `${k.type}=${k.status}`).sort()).toEqual(['ContainersReady=True', 'Initialized=True', 'PodScheduled=True', 'Ready=True']);
    expect(containerStatus(p)).toMatchObject({ ready: true, started: true, restartCount: 0, state: { running: {} } });
    serverIP = st.podIP;
    serverPid = Number(await httpGet(`http://${serverIP}:8080/`));
    expect(serverPid).toBeGreaterThan(0);
    const evs = await waitFor('Created and Started events', async () => {
      const e = await eventsOf('web');
      return e.some((x) => x.reason === 'Started') ? e : undefined;
    });
    expect(evs.map((e) => e.reason)).toEqual(expect.arrayContaining(['Created', 'Started']));
  });

  it('restarts a container whose process is killed: restartCount 1, lastState terminated', async () => {
    expect(serverPid).toBeGreaterThan(1); // never kill(0): that is the test's own process group
    process.kill(serverPid, 'SIGKILL');
    const p = await waitPod('web', 'web restarted', (x) => (containerStatus(x)?.restartCount ?? 0) >= 1 && containerStatus(x)?.state.running !== undefined);
    expect(containerStatus(p)?.restartCount).toBe(1);
    expect(containerStatus(p)?.lastState.terminated).toMatchObject({ exitCode: 137, reason: 'Error' });
    serverPid = Number(await waitFor('the new process to answer', () => httpGet(`http://${serverIP}:8080/`).catch(() => undefined)));
  });

  it('puts its Ready condition back when another writer marked the pod not ready (as the node controller does)', async () => {
    const ready = (x: Obj): string | undefined => ((x.status?.['conditions'] ?? []) as { type: string; status: string }[]).find((k) => k.type === 'Ready')?.status;
    await waitPod('web', 'web Ready', (x) => ready(x) === 'True');
    const conditions = ((await pods.get('default', 'web')).status?.['conditions'] ?? []) as { type: string; status: string }[];
    await pods.patchStatus('default', 'web', 'merge', { status: { conditions: conditions.map((k) => (k.type === 'Ready' ? { ...k, status: 'False', reason: 'NodeNotReady' } : k)) } });
    await waitPod('web', 'web Ready again', (x) => ready(x) === 'True');
  });

  it('may write the status of and delete only pods bound to it (NodeRestriction)', async () => {
    await pods.create({ metadata: { name: 'elsewhere', namespace: 'default' }, spec: { nodeName: 'some-other-node', containers: [{ name: 'c', image: 'local' }] } });
    const asNode = new ResourceClient<Obj>(new RestClient(loadKubeconfig({ path: await c.nodeKubeconfig(NODE) }).config), PODS);
    const status = await asNode.patchStatus('default', 'elsewhere', 'merge', { status: { phase: 'Running' } }).then(() => undefined, (e: unknown) => e as ApiStatusError);
    expect(status?.status.code).toBe(403);
    expect(status?.status.message).toBe(`pods "elsewhere" is forbidden: node "${NODE}" can only update pod status for pods with spec.nodeName set to itself`);
    const del = await asNode.delete('default', 'elsewhere').then(() => undefined, (e: unknown) => e as ApiStatusError);
    expect(del?.status.message).toBe(`pods "elsewhere" is forbidden: node "${NODE}" can only delete pods with spec.nodeName set to itself`);
    expect((await pods.get('default', 'elsewhere')).status?.['phase']).not.toBe('Running');
    await pods.delete('default', 'elsewhere', { gracePeriodSeconds: 0 });
  });

  it('puts a container that exits 1 in CrashLoopBackOff with BackOff events', async () => {
    await pods.create(podOf('crash', { containers: [{ name: 'c', image: 'local', command: ['sh', '-c', 'echo dying; exit 1'] }] }));
    const p = await waitPod('crash', 'CrashLoopBackOff', (x) => containerStatus(x)?.state.waiting?.reason === 'CrashLoopBackOff');
    expect(containerStatus(p)?.lastState.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
    expect(containerStatus(p)?.state.waiting?.message).toMatch(/^back-off \d.*restarting failed container=c pod=crash_default\(/);
    const e = await waitEvent('crash', 'BackOff');
    expect(e.message).toMatch(/^Back-off restarting failed container c in pod crash_default\(/);
  });

  it('turns bad input into waiting reasons and events, never a crashed agent', async () => {
    await pods.create(podOf('nocmd', { containers: [{ name: 'c', image: 'local' }] }));
    await pods.create(podOf('nobin', { containers: [{ name: 'c', image: 'local', command: ['/no/such/binary'] }] }));
    await pods.create(
      podOf('nocm', {
        containers: [{ name: 'c', image: 'local', command: ['sleep', '60'], volumeMounts: [{ name: 'v', mountPath: '/etc/cfg' }] }],
        volumes: [{ name: 'v', configMap: { name: 'missing-cm' } }],
      }),
    );
    await pods.create(
      podOf('badprobe', {
        containers: [{ name: 'c', image: 'local', command: ['sleep', '60'], livenessProbe: { tcpSocket: { port: 1 }, periodSeconds: 1, failureThreshold: 2 } }],
      }),
    );
    const nocmd = await waitPod('nocmd', 'a waiting reason for no command', (x) => containerStatus(x)?.state.waiting?.reason !== undefined && containerStatus(x)?.state.waiting?.reason !== 'ContainerCreating');
    expect(containerStatus(nocmd)?.state.waiting?.message ?? '').not.toBe('');
    await waitPod('nobin', 'a failed start for a missing binary', (x) => {
      const cs = containerStatus(x);
      return cs?.lastState.terminated !== undefined || cs?.state.terminated !== undefined || (cs?.state.waiting?.reason ?? 'ContainerCreating') !== 'ContainerCreating';
    });
    const fm = await waitEvent('nocm', 'FailedMount');
    expect(fm.message).toContain('configmap "missing-cm" not found');
    const un = await waitEvent('badprobe', 'Unhealthy');
    expect(un.message).toMatch(/^Liveness probe failed: /);
    // The agent is alive and still posting: the web pod keeps answering and the node stays Ready.
    const agent = c.agents.get(NODE);
    expect(agent?.child.exitCode).toBeNull();
    expect(Number(await httpGet(`http://${serverIP}:8080/`))).toBe(serverPid);
  });

  it('deletes gracefully: preStop, then SIGTERM, then the agent finishes the deletion', async () => {
    const marks = join(c.dir, 'marks');
    const script = `mkdir -p ${marks}; trap 'echo term > ${marks}/term; exit 0' TERM; while true; do sleep 0.1; done`;
    await pods.create(
      podOf('graceful', {
        terminationGracePeriodSeconds: 10,
        containers: [{ name: 'c', image: 'local', command: ['sh', '-c', script], lifecycle: { preStop: { exec: { command: ['sh', '-c', `mkdir -p ${marks}; echo pre > ${marks}/prestop`] } } } }],
      }),
    );
    await waitPod('graceful', 'graceful running', (x) => containerStatus(x)?.state.running !== undefined);
    await pods.delete('default', 'graceful');
    await waitFor('the agent to finish the deletion', async () => pods.get('default', 'graceful').then(() => false, (e: unknown) => isNotFound(e)));
    expect(existsSync(join(marks, 'prestop'))).toBe(true);
    expect(readFileSync(join(marks, 'term'), 'utf8').trim()).toBe('term');
    const killing = await waitEvent('graceful', 'Killing');
    expect(killing.message).toBe('Stopping container c');
    expect((killing as { involvedObject?: { fieldPath?: string } }).involvedObject?.fieldPath).toBe('spec.containers{c}');
  });

  it('kills a container that ignores SIGTERM after the grace period', async () => {
    await pods.create(podOf('stubborn', { terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'local', command: ['sh', '-c', "trap '' TERM; while true; do sleep 0.1; done", 'MARK-stubborn'] }] }));
    await waitPod('stubborn', 'stubborn running', (x) => containerStatus(x)?.state.running !== undefined);
    await pods.delete('default', 'stubborn');
    await waitFor('stubborn deleted', async () => pods.get('default', 'stubborn').then(() => false, (e: unknown) => isNotFound(e)));
    await waitFor('its process gone', () => processesWith('MARK-stubborn').length === 0);
  });

  it('adopts its pods after a SIGKILL and restart: the same process, no duplicate', async () => {
    const before = containerStatus(await pods.get('default', 'web'));
    // The container's shell wrapper and the server itself.
    const webProcs = processesWith('MARK-web').sort();
    expect(webProcs).toContain(serverPid);
    await kill(c.agents.get(NODE));
    expect(Number(await httpGet(`http://${serverIP}:8080/`))).toBe(serverPid);
    await c.startAgent(NODE);
    // A pod created while it runs again shows its loops are back; then the old pod is judged unchanged.
    await pods.create(podOf('after', { containers: [{ name: 'c', image: 'local', command: ['sleep', '60'] }] }));
    await waitPod('after', 'a new pod running after the restart', (x) => containerStatus(x)?.state.running !== undefined);
    const after = containerStatus(await pods.get('default', 'web'));
    expect(after?.restartCount).toBe(before?.restartCount);
    expect(after?.containerID).toBe(before?.containerID);
    expect(Number(await httpGet(`http://${serverIP}:8080/`))).toBe(serverPid);
    expect(processesWith('MARK-web').sort()).toEqual(webProcs);
  });

  it('serves pods/log through the API server: kubectl logs, -f, --previous, --tail, --since, -c', async () => {
    const loop = (tag: string): string => `i=0; while true; do echo ${tag} $i; i=$((i+1)); sleep 0.2; done`;
    await pods.create(
      podOf('talker', {
        containers: [
          { name: 'main', image: 'local', command: ['sh', '-c', loop('main')] },
          { name: 'side', image: 'local', command: ['sh', '-c', loop('side')] },
        ],
      }),
    );
    await waitPod('talker', 'talker running', (x) => containerStatus(x, 'side')?.state.running !== undefined && containerStatus(x, 'main')?.state.running !== undefined);
    const home = join(c.dir, 'kubectl-home');
    const kubectl = (...args: string[]): ReturnType<typeof runKubectl> => runKubectl(c.adminKubeconfig, home, args);
    await waitFor('a few lines of output', async () => ((await kubectl('logs', 'talker', '-c', 'main')).stdout.match(/^main \d+$/gm)?.length ?? 0) >= 4);

    // kubectl picks the first container itself; the API server asks for a name when none is given.
    const defaulted = await kubectl('logs', 'talker');
    expect(defaulted.stderr).toContain('Defaulted container "main" out of: main, side');
    expect(defaulted.stdout).toMatch(/^main 0\n/);
    const noName = await c.admin.request({ path: '/api/v1/namespaces/default/pods/talker/log' }).then(
      () => '',
      (e: unknown) => (e as Error).message,
    );
    expect(noName).toContain('a container name must be specified for pod talker, choose one of: [main side]');
    const side = await kubectl('logs', 'talker', '-c', 'side');
    expect(side.stdout).toMatch(/^side 0\nside 1\n/);
    expect(side.stdout).not.toContain('main');
    const tail = await kubectl('logs', 'talker', '-c', 'main', '--tail=2');
    expect(tail.stdout.trim().split('\n')).toHaveLength(2);
    expect((await kubectl('logs', 'talker', '-c', 'main', '--since=1h')).stdout).toMatch(/^main 0\n/);
    const stamped = await kubectl('logs', 'talker', '-c', 'main', '--timestamps', '--tail=1');
    expect(stamped.stdout).toMatch(/^\d{4}-\d\d-\d\dT\S+Z main \d+\n$/);
    expect((await kubectl('logs', 'talker', '-c', 'main', '--limit-bytes=5')).stdout).toBe('main ');

    // --previous: the crash-looping container's last run said "dying".
    expect((await kubectl('logs', 'crash', '--previous')).stdout).toBe('dying\n');
    const noPrev = await kubectl('logs', 'talker', '-c', 'main', '--previous');
    expect(noPrev.stderr).toContain('previous terminated container "main" in pod "talker" not found');

    // -f keeps streaming lines written after it started.
    const follow = spawnKubectl(c.adminKubeconfig, home, ['logs', '-f', 'talker', '-c', 'main', '--tail=1']);
    let out = '';
    follow.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const first = await waitFor('the first followed line', () => /main (\d+)\n/.exec(out)?.[1]);
      await waitFor('lines written after it', () => (out.match(/^main \d+$/gm) ?? []).some((l) => Number(l.split(' ')[1]) >= Number(first) + 3), {
        detail: () => out,
      });
    } finally {
      follow.kill('SIGKILL');
    }
  });
});
