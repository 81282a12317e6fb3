// The node agent's acceptance list, on the whole stack as a user runs it: one `setpoint server` member
// (store, API server, scheduler, controller manager) and one `setpoint agent`, driven with kubectl. A killed
// container restarts; a command that exits 1 crash-loops with a growing back-off; liveness restarts,
// readiness holds a rollout; a rolling update with maxUnavailable 0 keeps three pods answering; an agent
// SIGKILLed and started again adopts its pods; deletion runs preStop, SIGTERM, then SIGKILL; a pod with no
// command waits with a reason. Pods are scheduled (no nodeName), so every loop takes part.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/client/kube-object.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { NODES, PODS } from '../../src/client/resource-types.js';
import { waitFor } from '../../src/harness/wait.js';
import { spawnKubectl } from '../apiserver/helpers/kubectl-runner.js';
import { AgentStack, containerGroups } from './helpers/agent-stack.js';
import { answeringLoop } from './helpers/answering-loop.js';

interface CStatus {
  name: string;
  restartCount: number;
  ready: boolean;
  state: { running?: unknown; waiting?: { reason?: string; message?: string }; terminated?: unknown };
}
type Pod = KubeObject & { status?: { podIP?: string; phase?: string; containerStatuses?: CStatus[]; conditions?: { type: string; status: string }[] } };

/** A node HTTP server on POD_IP:8080 answering "<pod> <VERSION>", saying "serving <pid>" when it listens. */
const SERVER =
  "require('http').createServer((q, s) => s.end(process.env.POD_NAME + ' ' + process.env.VERSION))" +
  ".listen(8080, process.env.POD_IP, () => console.log('serving ' + process.pid))";

const POD_NAME_ENV = { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } };

function pod(name: string, spec: Record<string, unknown>): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { test: name } }, spec: { terminationGracePeriodSeconds: 2, ...spec } };
}

/** A Deployment of `replicas` pods labelled app=<name>, with a short grace period. */
function deployment(name: string, replicas: number, podSpec: Record<string, unknown>, strategy?: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default' },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      ...(strategy ? { strategy } : {}),
      template: { metadata: { labels: { app: name } }, spec: { terminationGracePeriodSeconds: 2, ...podSpec } },
    },
  };
}

const HELLO = deployment(
  'hello',
  3,
  {
    containers: [
      {
        name: 'hello',
        image: 'local/node',
        command: [process.execPath, '-e', SERVER],
        env: [POD_NAME_ENV, { name: 'VERSION', value: '1' }],
        readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 },
      },
    ],
  },
  { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
);

/** `kubectl create -f` of the object, written to a file in the stack's directory. */
async function createWith(s: AgentStack, o: KubeObject): Promise<void> {
  const file = join(s.dir, `${o.metadata?.name ?? 'obj'}-${Date.now()}.json`);
  writeFileSync(file, JSON.stringify(o));
  const r = await s.kubectl('create', '-f', file);
  expect(r.stderr).toBe('');
}

/** One row of `kubectl get pods --no-headers`: NAME READY STATUS RESTARTS AGE (RESTARTS may read "1 (5s ago)"). */
interface Row {
  name: string;
  ready: string;
  status: string;
  restarts: number;
}

function rows(stdout: string): Row[] {
  return stdout
    .trim()
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const [name = '', ready = '', status = '', restarts = ''] = l.trim().split(/\s{2,}/);
      return { name, ready, status, restarts: Number(restarts.split(' ')[0]) };
    });
}

describe('the node agent on the whole stack, driven with kubectl', () => {
  let s: AgentStack;
  let pods: ResourceClient<Pod>;

  async function row(name: string): Promise<Row | undefined> {
    const r = await s.kubectl('get', 'pod', name, '--no-headers');
    return r.code === 0 ? rows(r.stdout)[0] : undefined;
  }
  async function waitRow(name: string, what: string, ok: (r: Row) => boolean, timeoutMs = 60_000): Promise<Row> {
    let last: Row | undefined;
    return waitFor(what, async () => {
      last = await row(name);
      return last !== undefined && ok(last) ? last : undefined;
    }, { timeoutMs, intervalMs: 250, detail: () => JSON.stringify(last) });
  }
  /** `kubectl describe pod` until every pattern matches (a container between runs may show another state). */
  async function describeUntil(name: string, patterns: RegExp[], timeoutMs = 60_000): Promise<string> {
    let last = '';
    return waitFor(`describe pod ${name} to show ${patterns.join(', ')}`, async () => {
      last = (await s.kubectl('describe', 'pod', name)).stdout;
      return patterns.every((p) => p.test(last)) ? last : undefined;
    }, { timeoutMs, intervalMs: 500, detail: () => last });
  }
  const create = (o: KubeObject): Promise<void> => createWith(s, o);
  /** Pids each container's process group leads, for the pods given. */
  function groupsOf(uids: readonly string[]): Map<string, number[]> {
    return new Map([...containerGroups(s.nodeRoot)].filter(([k]) => uids.some((u) => k.startsWith(`${u}/`))));
  }
  async function uidOf(name: string): Promise<string> {
    return (await pods.get('default', name)).metadata?.uid ?? '';
  }
  async function answer(ip: string): Promise<string | undefined> {
    try {
      const r = await fetch(`http://${ip}:8080/`, { signal: AbortSignal.timeout(10_000) });
      return r.ok ? await r.text() : undefined;
    } catch {
      return undefined;
    }
  }
  async function helloPods(): Promise<Pod[]> {
    return (await pods.list('default', { labelSelector: 'app=hello' })).items;
  }
  /** The hello pods not being deleted. */
  async function liveHelloPods(): Promise<Pod[]> {
    return (await helloPods()).filter((p) => !p.metadata?.deletionTimestamp);
  }
  const versionOf = (p: Pod): string | undefined =>
    ((p.spec as { containers?: { env?: { name: string; value?: string }[] }[] } | undefined)?.containers?.[0]?.env ?? []).find((e) => e.name === 'VERSION')?.value;
  const isReady = (p: Pod): boolean => (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

  beforeAll(async () => {
    s = await AgentStack.start();
    pods = new ResourceClient<Pod>(s.admin, PODS);
    await s.startAgent();
    const nodes = new ResourceClient<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>(s.admin, NODES);
    await waitFor('node-1 Ready', async () => {
      const n = await nodes.get('', 'node-1').catch(() => undefined);
      return (n?.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
    }, { timeoutMs: 60_000, detail: () => s.agent?.logTail(5) ?? '' });
  }, 200_000);

  afterAll(async () => {
    await s?.stop();
  }, 60_000);

  let webPid = 0;
  let webPreviousPid = 0;

  it('restarts a container whose process is SIGKILLed: RESTARTS 1 in kubectl get pods, its last run in logs --previous', async () => {
    await create(pod('web', { containers: [{ name: 'c', image: 'local/node', command: [process.execPath, '-e', SERVER], env: [POD_NAME_ENV, { name: 'VERSION', value: 'web' }] }] }));
    await waitRow('web', 'web Running', (r) => r.status === 'Running' && r.ready === '1/1');
    const ip = (await pods.get('default', 'web')).status?.podIP ?? '';
    expect(await waitFor('web to answer', () => answer(ip))).toBe('web web');
    const first = await waitFor('its first run to log', async () => /^serving (\d+)$/m.exec((await s.kubectl('logs', 'web')).stdout)?.[1]);
    webPid = Number(first);
    expect(webPid).toBeGreaterThan(1); // never kill(0) or -1
    process.kill(webPid, 'SIGKILL');
    const r = await waitRow('web', 'web restarted once', (x) => x.restarts >= 1 && x.status === 'Running');
    expect(r.restarts).toBe(1);
    expect(await waitFor('web to answer again', () => answer(ip))).toBe('web web');
    const prev = await s.kubectl('logs', 'web', '--previous');
    expect(prev.stdout).toBe(`serving ${webPid}\n`);
    webPreviousPid = webPid;
    webPid = Number(await waitFor('the second run to log', async () => /^serving (\d+)$/m.exec((await s.kubectl('logs', 'web')).stdout)?.[1]));
  });

  it('puts a command that exits 1 in CrashLoopBackOff, the back-off growing, in kubectl get pods and describe', async () => {
    await create(pod('crash', { containers: [{ name: 'c', image: 'local', command: ['sh', '-c', 'echo dying; exit 1'] }] }));
    // The back-off delays the agent reports, in the order they come: 1s, 2s, 4s, … (--crash-loop-back-off-initial=1s).
    const delays: string[] = [];
    const statuses = new Set<string>();
    let restarts = 0;
    await waitFor('three restarts', async () => {
      const r = await row('crash');
      if (r) {
        statuses.add(r.status);
        restarts = r.restarts;
      }
      const msg = (await pods.get('default', 'crash')).status?.containerStatuses?.[0]?.state.waiting?.message ?? '';
      const d = /^back-off (\S+) restarting failed container=c pod=crash_default\(/.exec(msg)?.[1];
      if (d !== undefined && delays.at(-1) !== d) delays.push(d);
      return restarts >= 3 && delays.length >= 2;
    }, { timeoutMs: 90_000, intervalMs: 200, detail: () => `restarts ${restarts}, statuses ${[...statuses].join(',')}, delays ${delays.join(',')}` });
    console.log(`crash: back-off delays seen in order ${delays.join(', ')}; kubectl STATUS values ${[...statuses].join(', ')}`);
    expect(statuses).toContain('CrashLoopBackOff');
    const ms = delays.map((d) => Number(/^(\d+)s$/.exec(d)?.[1]) * 1000);
    expect(ms.every((m, i) => [1000, 2000, 4000, 8000].includes(m) && (i === 0 || m > (ms[i - 1] ?? 0))), delays.join(',')).toBe(true);
    await describeUntil('crash', [
      /State:\s+Waiting\n\s+Reason:\s+CrashLoopBackOff\n/,
      /Last State:\s+Terminated\n\s+Reason:\s+Error\n\s+Exit Code:\s+1\n/,
      /Restart Count:\s+([3-9]|\d\d)\n/,
      /Warning\s+BackOff\s+.*Back-off restarting failed container c in pod crash_default\(/,
    ]);
    expect((await s.kubectl('logs', 'crash', '--previous')).stdout).toBe('dying\n');
    await s.kubectl('delete', 'pod', 'crash', '--wait=true');
  });

  it('restarts a container whose liveness probe fails, with the Unhealthy and Killing events', async () => {
    await create(
      pod('live', {
        containers: [{ name: 'c', image: 'local', command: ['sh', '-c', 'while true; do sleep 0.2; done'], livenessProbe: { exec: { command: ['false'] }, periodSeconds: 1, failureThreshold: 2 } }],
      }),
    );
    await waitRow('live', 'live restarted by its probe', (r) => r.restarts >= 1);
    await describeUntil('live', [
      /Liveness:\s+exec \[false\] delay=0s timeout=1s period=1s #success=1 #failure=2/,
      /Warning\s+Unhealthy\s+.*Liveness probe failed:/,
      /Normal\s+Killing\s+.*Container c failed liveness probe, will be restarted/,
    ]);
    await s.kubectl('delete', 'pod', 'live', '--wait=true');
  });

  it('keeps three pods answering at every check through a rolling update with maxUnavailable 0', async () => {
    await create(HELLO);
    const rollout = await s.kubectl('rollout', 'status', 'deployment/hello', '--timeout=120s');
    expect(rollout.stdout).toContain('deployment "hello" successfully rolled out');
    const v1 = await liveHelloPods();
    expect(v1.filter(isReady)).toHaveLength(3);
    for (const p of v1) expect(await answer(p.status?.podIP ?? '')).toBe(`${p.metadata?.name} 1`);

    // Scaled to 5 and back with kubectl: five answer, then three are left.
    expect((await s.kubectl('scale', 'deployment/hello', '--replicas=5')).stdout).toContain('deployment.apps/hello scaled');
    await waitFor('five hello pods answering', async () => {
      const ps = (await liveHelloPods()).filter(isReady);
      return ps.length === 5 && (await Promise.all(ps.map((p) => answer(p.status?.podIP ?? '')))).every((a) => a !== undefined);
    }, { timeoutMs: 90_000 });
    expect((await s.kubectl('scale', 'deployment/hello', '--replicas=3')).stdout).toContain('deployment.apps/hello scaled');
    await waitFor('back to three hello pods', async () => (await helloPods()).length === 3, { timeoutMs: 90_000 });
    const old = await liveHelloPods();

    // The client loop: every pod address the API lists, asked at each check.
    const loop = answeringLoop(async () => (await helloPods()).map((p) => p.status?.podIP ?? ''), answer);
    let answering: number[];
    try {
      expect((await s.kubectl('set', 'env', 'deployment/hello', 'VERSION=2')).stdout).toContain('deployment.apps/hello env updated');
      const r = await s.kubectl('rollout', 'status', 'deployment/hello', '--timeout=120s');
      expect(r.stdout, r.stderr).toContain('deployment "hello" successfully rolled out');
    } finally {
      answering = await loop.stop();
    }
    console.log(`rolling update: ${answering.length} checks, pods answering per check min ${Math.min(...answering)} max ${Math.max(...answering)}`);
    expect(answering.length).toBeGreaterThan(10);
    expect(Math.min(...answering), answering.join(',')).toBeGreaterThanOrEqual(3);
    // Every old pod was replaced, and the new ones say so.
    const v2 = await liveHelloPods();
    expect(v2.filter(isReady)).toHaveLength(3);
    expect(v2.some((p) => old.some((o) => o.metadata?.uid === p.metadata?.uid))).toBe(false);
    for (const p of v2) expect(await answer(p.status?.podIP ?? '')).toBe(`${p.metadata?.name} 2`);
  });

  it('holds a rollout whose new pod never becomes Ready: rollout status times out, the old pods stay', async () => {
    const before = await liveHelloPods();
    const patch = JSON.stringify([
      { op: 'replace', path: '/spec/template/spec/containers/0/readinessProbe', value: { tcpSocket: { port: 9 }, periodSeconds: 1 } },
      { op: 'replace', path: '/spec/template/spec/containers/0/env/1/value', value: '3' },
    ]);
    expect((await s.kubectl('patch', 'deployment', 'hello', '--type=json', '-p', patch)).code).toBe(0);
    // The new pod runs, not Ready, and its probe says why.
    const fresh = await waitFor('the new pod', async () => (await liveHelloPods()).find((p) => versionOf(p) === '3'));
    const name = fresh.metadata?.name ?? '';
    await waitRow(name, 'the new pod Running, not ready', (r) => r.status === 'Running' && r.ready === '0/1');
    await describeUntil(name, [/Warning\s+Unhealthy\s+.*Readiness probe failed: dial tcp [\d.]+:9: connect: connection refused/]);
    const r = await s.kubectl('rollout', 'status', 'deployment/hello', '--timeout=5s');
    expect(r.code).not.toBe(0);
    expect(r.stdout).toContain('Waiting for deployment "hello" rollout to finish: 1 out of 3 new replicas have been updated...');
    expect(r.stderr).toContain('timed out');
    // The three old pods are the same, Ready, answering with the old version.
    const now = await helloPods();
    for (const b of before) {
      const p = now.find((x) => x.metadata?.uid === b.metadata?.uid);
      expect(p && isReady(p) && !p.metadata?.deletionTimestamp, `${b.metadata?.name} still Ready`).toBe(true);
      expect(await answer(p?.status?.podIP ?? '')).toBe(`${b.metadata?.name} 2`);
    }
  });

  it('adopts its pods when SIGKILLed and started again: the same processes, none doubled, restarts unchanged, logs -f follows', async () => {
    await create(pod('talker', { containers: [{ name: 'c', image: 'local', command: ['sh', '-c', 'i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.2; done'] }] }));
    await waitRow('talker', 'talker Running', (r) => r.status === 'Running');
    const uids = await Promise.all(['web', 'talker'].map(uidOf));
    uids.push(...(await liveHelloPods()).map((p) => p.metadata?.uid ?? ''));
    const before = groupsOf(uids);
    expect(before.size).toBe(uids.length); // one container each, every one running
    for (const pids of before.values()) expect(pids).toHaveLength(1);
    const restartsBefore = rows((await s.kubectl('get', 'pods', '--no-headers')).stdout);

    await s.agent?.kill('SIGKILL');
    await s.startAgent();
    // Its loops are back once a new pod runs; then the old ones are judged.
    await create(pod('after', { containers: [{ name: 'c', image: 'local', command: ['sh', '-c', 'while true; do sleep 0.2; done'] }] }));
    await waitRow('after', 'a pod created after the restart Running', (r) => r.status === 'Running');
    expect(groupsOf(uids)).toEqual(before);
    const restartsAfter = rows((await s.kubectl('get', 'pods', '--no-headers')).stdout);
    for (const b of restartsBefore) expect(restartsAfter.find((a) => a.name === b.name)?.restarts, b.name).toBe(b.restarts);
    const web = await pods.get('default', 'web');
    expect(await answer(web.status?.podIP ?? '')).toBe('web web');
    // The new agent knows the runs before it: the current one and the one before the kill.
    expect((await s.kubectl('logs', 'web')).stdout).toBe(`serving ${webPid}\n`);
    expect((await s.kubectl('logs', 'web', '--previous')).stdout).toBe(`serving ${webPreviousPid}\n`);

    // kubectl logs -f through the new agent: the adopted container's output keeps coming.
    const follow = spawnKubectl(s.adminKubeconfig, join(s.dir, 'kubectl-home'), ['logs', '-f', 'talker', '--tail=1']);
    let out = '';
    follow.stdout.on('data', (d: Buffer) => (out += d.toString()));
    follow.stderr.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const first = Number(await waitFor('the first followed line', () => /tick (\d+)\n/.exec(out)?.[1], { detail: () => out }));
      await waitFor('lines written after it', () => [...out.matchAll(/tick (\d+)\n/g)].some((m) => Number(m[1]) >= first + 3), { detail: () => out });
    } finally {
      follow.kill('SIGKILL');
    }
  });

  it('deletes a pod with kubectl: preStop, then SIGTERM, then SIGKILL after the grace period for the one that ignores it', async () => {
    const marks = join(s.dir, 'marks');
    // The trapping container writes whether preStop had run when SIGTERM came; the stubborn one notes the
    // SIGTERM and carries on, so only a SIGKILL ends it.
    const trapper = `trap 'if [ -f ${marks}/prestop ]; then echo after-prestop; else echo before-prestop; fi > ${marks}/term; exit 0' TERM; while true; do sleep 0.1; done`;
    const stubborn = `trap 'echo ignored > ${marks}/stubborn-term' TERM; while true; do sleep 0.1; done`;
    await create(
      pod('graceful', {
        terminationGracePeriodSeconds: 3,
        containers: [
          { name: 'trapper', image: 'local', command: ['sh', '-c', `mkdir -p ${marks}; ${trapper}`], lifecycle: { preStop: { exec: { command: ['sh', '-c', `echo pre > ${marks}/prestop`] } } } },
          { name: 'stubborn', image: 'local', command: ['sh', '-c', stubborn] },
        ],
      }),
    );
    await waitRow('graceful', 'graceful Running', (r) => r.status === 'Running' && r.ready === '2/2');
    const uid = await uidOf('graceful');
    const groups = groupsOf([uid]);
    expect([...groups.keys()].sort()).toEqual([`${uid}/stubborn`, `${uid}/trapper`]);
    const del = await s.kubectl('delete', 'pod', 'graceful', '--timeout=60s');
    expect(del.stdout).toContain('pod "graceful" deleted');
    expect(readFileSync(join(marks, 'prestop'), 'utf8')).toBe('pre\n');
    expect(readFileSync(join(marks, 'term'), 'utf8')).toBe('after-prestop\n');
    expect(readFileSync(join(marks, 'stubborn-term'), 'utf8')).toBe('ignored\n');
    // Both groups are gone: the stubborn one could only have been SIGKILLed.
    for (const [pid] of groups.values()) expect(existsSync(`/proc/${pid ?? 0}`) && readFileSync(`/proc/${pid ?? 0}/stat`, 'utf8').includes(') Z '), `pid ${pid} gone`).toBe(false);
    expect(groupsOf([uid]).size).toBe(0);
    const gone = await s.kubectl('get', 'pod', 'graceful');
    expect(gone.stderr).toContain('Error from server (NotFound): pods "graceful" not found');
    const events = await s.kubectl('get', 'events', '--field-selector', 'involvedObject.name=graceful');
    expect(events.stdout).toMatch(/Killing\s+pod\/graceful\s+Stopping container stubborn/);
  });

  it('gives bad input a clear waiting reason or event in kubectl, and the agent carries on', async () => {
    await create(pod('nocmd', { containers: [{ name: 'c', image: 'nginx' }] }));
    await create(pod('nobin', { containers: [{ name: 'c', image: 'local', command: ['/no/such/binary'] }] }));
    await create(
      pod('nocm', {
        containers: [{ name: 'c', image: 'local', command: ['sleep', '60'], volumeMounts: [{ name: 'v', mountPath: '/etc/cfg' }] }],
        volumes: [{ name: 'v', configMap: { name: 'missing-cm' } }],
      }),
    );
    const r = await waitRow('nocmd', 'a waiting reason', (x) => x.status !== 'Pending' && x.status !== 'ContainerCreating');
    expect(r).toMatchObject({ ready: '0/1', status: 'CreateContainerError', restarts: 0 });
    await describeUntil('nocmd', [/State:\s+Waiting\n\s+Reason:\s+CreateContainerError\n/]);
    const msg = await s.kubectl('get', 'pod', 'nocmd', '-o', 'jsonpath={.status.containerStatuses[0].state.waiting.message}');
    expect(msg.stdout).toBe('no command specified');
    await describeUntil('nobin', [/Last State:\s+Terminated\n\s+Reason:\s+StartError\n\s+Message:\s+exec: "\/no\/such\/binary": stat \/no\/such\/binary: no such file or directory\n\s+Exit Code:\s+128\n/]);
    await waitRow('nocm', 'nocm held in ContainerCreating', (x) => x.status === 'ContainerCreating');
    await describeUntil('nocm', [/Warning\s+FailedMount\s+.*MountVolume.SetUp failed for volume "v" : configmap "missing-cm" not found/]);
    expect(s.agent?.running).toBe(true);
    expect((await row('web'))?.status).toBe('Running');
  });
});

describe('an agent SIGKILLed, with a second node to take its pods', () => {
  let s: AgentStack;
  // A node whose Lease is not renewed for 10 s is Ready=Unknown (renewed every 2 s here).
  const AGENT_FLAGS = ['--node-lease-duration-seconds=8'];
  type Node = KubeObject & { spec?: { taints?: { key: string; effect: string }[] }; status?: { conditions?: { type: string; status: string }[] } };

  async function nodeReady(name: string): Promise<string | undefined> {
    const n = await new ResourceClient<Node>(s.admin, NODES).get('', name).catch(() => undefined);
    return n?.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  }
  /** `kubectl get node NAME --no-headers`' STATUS column. */
  async function kubectlNodeStatus(name: string): Promise<string | undefined> {
    const r = await s.kubectl('get', 'node', name, '--no-headers');
    return r.code === 0 ? r.stdout.trim().split(/\s{2,}/)[1] : undefined;
  }

  beforeAll(async () => {
    s = await AgentStack.startSplit(['--node-monitor-grace-period=10s', '--node-monitor-period=1s']);
    await s.startAgent('node-a', AGENT_FLAGS);
    await waitFor('node-a Ready', async () => (await nodeReady('node-a')) === 'True', { timeoutMs: 60_000 });
  }, 200_000);
  afterAll(async () => {
    await s?.stop();
  }, 60_000);

  it('goes NotReady after the grace period, its pods are recreated on the other node after their tolerationSeconds, and its restart leaves no duplicate', async () => {
    const pods = new ResourceClient<Pod>(s.admin, PODS);
    const tolerate = (key: string): Record<string, unknown> => ({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 2 });
    await createWith(
      s,
      deployment('spread', 2, {
        tolerations: [tolerate('node.kubernetes.io/unreachable'), tolerate('node.kubernetes.io/not-ready')],
        containers: [{ name: 'c', image: 'local', command: ['sh', '-c', 'while true; do sleep 0.2; done'] }],
      }),
    );
    const running = async (node: string): Promise<Pod[]> =>
      (await pods.list('default', { labelSelector: 'app=spread' })).items.filter(
        (p) => (p.spec as { nodeName?: string } | undefined)?.nodeName === node && !p.metadata?.deletionTimestamp && p.status?.containerStatuses?.[0]?.state.running !== undefined,
      );
    // Both on node-a, the only node so far.
    const old = await waitFor('two spread pods running on node-a', async () => {
      const ps = await running('node-a');
      return ps.length === 2 ? ps : undefined;
    }, { timeoutMs: 60_000 });
    const oldUids = old.map((p) => p.metadata?.uid ?? '');
    const ofOld = (): Map<string, number[]> => new Map([...containerGroups(s.rootOf('node-a'))].filter(([k]) => oldUids.some((u) => k.startsWith(`${u}/`))));
    const oldGroups = ofOld();
    expect(oldGroups.size).toBe(2);

    await s.startAgent('node-b', AGENT_FLAGS);
    await waitFor('node-b Ready', async () => (await nodeReady('node-b')) === 'True', { timeoutMs: 60_000 });

    await s.agents.get('node-a')?.kill('SIGKILL');
    let seen: string | undefined;
    await waitFor('kubectl to show node-a NotReady', async () => (seen = await kubectlNodeStatus('node-a')) === 'NotReady', {
      timeoutMs: 60_000,
      detail: () => `${seen ?? ''} ${readFileSync(join(s.dir, 'controller-manager.log'), 'utf8').split('\n').slice(-15).join('\n')}`,
    });
    const node = await new ResourceClient<Node>(s.admin, NODES).get('', 'node-a');
    expect(node.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('Unknown');
    const fresh = await waitFor('two spread pods running on node-b', async () => {
      const ps = await running('node-b');
      return ps.length === 2 ? ps : undefined;
    }, { timeoutMs: 60_000 });
    expect(fresh.some((p) => oldUids.includes(p.metadata?.uid ?? ''))).toBe(false);
    // With no agent on node-a nobody stopped its processes: the evicted pods wait there, Terminating.
    expect(ofOld()).toEqual(oldGroups);

    await s.startAgent('node-a', AGENT_FLAGS);
    await waitFor('kubectl to show node-a Ready again', async () => (await kubectlNodeStatus('node-a')) === 'Ready', { timeoutMs: 60_000 });
    // The agent back finishes what it missed: the evicted pods' processes stopped, their objects gone.
    await waitFor('the evicted pods gone, processes and objects', async () => {
      if (ofOld().size > 0) return false;
      const left = await Promise.all(oldUids.map(async (u) => (await pods.list('default', { labelSelector: 'app=spread' })).items.some((p) => p.metadata?.uid === u)));
      return left.every((l) => !l);
    }, { timeoutMs: 60_000, detail: () => JSON.stringify([...ofOld()]) });
    // One process group per pod of the Deployment, all on node-b.
    expect(containerGroups(s.rootOf('node-a')).size).toBe(0);
    const onB = containerGroups(s.rootOf('node-b'));
    expect([...onB.keys()].sort()).toEqual(fresh.map((p) => `${p.metadata?.uid ?? ''}/c`).sort());
    for (const pids of onB.values()) expect(pids).toHaveLength(1);
  }, 180_000);
});
