// Nodes that stop heartbeating, end to end on real processes (a store, `setpoint apiserver`, `setpoint
// scheduler`, `setpoint controller-manager` with short grace periods, and agents), on Setpoint's store and
// on etcd 3.4: (a) a simulated node whose agent process is killed goes Ready=Unknown after
// --node-monitor-grace-period, gets the unreachable NoExecute taint, its pods are evicted after their
// tolerationSeconds and the ReplicaSet recreates them on the other simulated nodes; (b) the same with real
// agents running real pods: the agent and its pods' processes are SIGKILLed as a machine failure, the pods
// come back on the other agent's node, and the killed agent, restarted, leaves no duplicate process of an
// evicted pod and finishes the stale pods. Needs `npm run build` first.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopAdoptedPods } from '../../src/agent/stop-pods.js';
import { readCertDirCa } from '../../src/apiserver/pki/cert-dir.js';
import { writeClientKubeconfig } from '../../src/apiserver/pki/kubeconfig.js';
import { isNotFound } from '../../src/client/api-status-error.js';
import type { KubeObject } from '../../src/client/kube-object.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { EVENTS, NODES, PODS, REPLICASETS } from '../../src/client/resource-types.js';
import { RestClient } from '../../src/client/rest-client.js';
import type { Pod } from '../../src/controllers/apps-types.js';
import type { NodeObject } from '../../src/controllers/node-lifecycle/node-types.js';
import { isPodReady } from '../../src/controllers/pod-readiness.js';
import { findCondition } from '../../src/controllers/status-conditions.js';
import { startApiServerProcess, type ApiServerProcess } from '../../src/harness/apiserver-process.js';
import { startLeaderElected } from '../../src/harness/kinds/leader-elected-process.js';
import { ManagedProcess } from '../../src/harness/managed-process.js';
import { setpointMain } from '../../src/harness/setpoint-main.js';
import { waitFor } from '../../src/harness/wait.js';
import { STORE_KINDS, StoreTestCluster } from '../etcd-client/helpers/store-cluster.js';

const NS = 'default';
const KEEP_RUNNING = 'setInterval(() => {}, 1000)';
const TOLERATION_SECONDS = 2;
const LOOP_FLAGS = ['--node-monitor-grace-period=3s', '--node-startup-grace-period=10s', '--node-monitor-period=1s', '--node-eviction-rate=100'];

/** Tolerates both node problems for a short while, so an eviction comes quickly after the taint. */
const TOLERATIONS = ['node.kubernetes.io/unreachable', 'node.kubernetes.io/not-ready'].map((key) => ({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: TOLERATION_SECONDS }));

function replicaSet(name: string, replicas: number, nodeSelector: Record<string, string>, container: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, namespace: NS },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { nodeSelector, tolerations: TOLERATIONS, containers: [{ name: 'c', ...container }] } },
    },
  };
}

/**
 * Pids of the processes whose environment holds POD_UID=<uid>: a pod's container processes, as the agent
 * started them (each a wrapper `sh` and the command), or with `commandOnly` the commands alone.
 */
function processesOf(uid: string, commandOnly = false): number[] {
  const needle = `POD_UID=${uid}`;
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (!readFileSync(`/proc/${d}/environ`, 'utf8').split('\0').includes(needle)) continue;
      if (!commandOnly || readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0')[0] === process.execPath) out.push(Number(d));
    } catch {
      // gone meanwhile, or not ours
    }
  }
  return out;
}

describe.each(STORE_KINDS)('nodes that stop heartbeating, on %s', (store) => {
  let dir: string;
  let etcd: StoreTestCluster;
  let api: ApiServerProcess;
  let rest: RestClient;
  const procs: ManagedProcess[] = [];
  const agentRoots: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'node-eviction-'));
    etcd = await StoreTestCluster.start(store);
    api = await startApiServerProcess({ dir, etcdServers: etcd.endpoints() });
    rest = new RestClient({ ...api.clientConfig, timeoutMs: 10_000 });
    const o = { dir, kubeconfig: api.kubeconfig };
    procs.push((await startLeaderElected('scheduler', { ...o, name: 'scheduler', flags: [] })).proc);
    procs.push((await startLeaderElected('controller-manager', { ...o, name: 'controller-manager', flags: LOOP_FLAGS })).proc);
  }, 180_000);

  afterAll(async () => {
    for (const p of procs) await p.kill('SIGKILL');
    for (const root of agentRoots) await stopAdoptedPods(root).catch(() => undefined);
    rest?.close();
    await api?.stop();
    await etcd?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const nodes = (): ResourceClient<NodeObject> => new ResourceClient<NodeObject>(rest, NODES);
  const pods = (): ResourceClient<Pod> => new ResourceClient<Pod>(rest, PODS);
  const podsOf = async (app: string): Promise<Pod[]> => (await pods().list(NS, { labelSelector: `app=${app}` })).items;
  const live = (ps: Pod[]): Pod[] => ps.filter((p) => !p.metadata.deletionTimestamp);
  const nodeReady = async (name: string): Promise<string | undefined> => findCondition((await nodes().get('', name).catch(() => undefined))?.status?.conditions, 'Ready')?.status;

  function agent(name: string, args: readonly string[]): ManagedProcess {
    const p = new ManagedProcess(`setpoint agent ${name}`, { bin: process.execPath, args: [setpointMain(), 'agent', ...args], env: { SETPOINT_LOG_FORMAT: 'json' } }, { logFile: join(dir, `agent-${name}.log`) });
    procs.push(p);
    p.start();
    return p;
  }

  /** A silent node: Ready=Unknown with Kubernetes' reason, both unreachable taints, the NoExecute one stamped. */
  async function expectUnreachable(name: string): Promise<void> {
    const n = await waitFor(
      `${name} Ready=Unknown and tainted unreachable`,
      async () => {
        const got = await nodes().get('', name);
        const keys = (got.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`);
        return findCondition(got.status?.conditions, 'Ready')?.status === 'Unknown' && keys.includes('node.kubernetes.io/unreachable:NoExecute') ? got : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(findCondition(n.status?.conditions, 'Ready')).toMatchObject({ reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' });
    expect(n.spec?.taints?.find((t) => t.effect === 'NoExecute')?.timeAdded).toBeTruthy();
  }

  /** The eviction events the taint manager left for these pods. */
  async function expectEvictionEvents(evicted: readonly Pod[]): Promise<void> {
    const want = evicted.map((p) => `Marking for deletion Pod ${NS}/${p.metadata.name}`).sort();
    await waitFor('the TaintManagerEviction events', async () => {
      const list = (await new ResourceClient(rest, EVENTS).list(NS)).items as Array<KubeObject & { reason?: string; message?: string }>;
      const got = new Set(list.filter((e) => e.reason === 'TaintManagerEviction').map((e) => e.message ?? ''));
      return want.every((m) => got.has(m));
    });
  }

  it('a simulated node that stops heartbeating: Unknown, tainted, its pods evicted and recreated on the other nodes', async () => {
    const kc = `--kubeconfig=${api.kubeconfig}`;
    // The node that will fail runs alone in its own agent process, so its pods all land on it.
    const lonely = agent('lonely', [kc, '--simulate=1', '--node-name=lonely', '--node-lease-duration-seconds=4']);
    await waitFor('lonely-0 Ready', async () => (await nodeReady('lonely-0')) === 'True', { timeoutMs: 60_000 });
    await new ResourceClient(rest, REPLICASETS).create(replicaSet('sim', 3, { type: 'simulated' }, { image: 'img:1' }));
    const first = await waitFor('three pods Ready on lonely-0', async () => {
      const ps = live(await podsOf('sim'));
      return ps.length === 3 && ps.every((p) => p.spec?.nodeName === 'lonely-0' && isPodReady(p)) ? ps : undefined;
    }, { timeoutMs: 60_000 });
    agent('others', [kc, '--simulate=2', '--node-name=sim', '--node-lease-duration-seconds=4']);
    await waitFor('sim-0 and sim-1 Ready', async () => (await nodeReady('sim-0')) === 'True' && (await nodeReady('sim-1')) === 'True', { timeoutMs: 60_000 });

    await lonely.kill('SIGKILL');
    await expectUnreachable('lonely-0');
    const evicted = await waitFor('the pods on lonely-0 evicted', async () => {
      const ps = (await podsOf('sim')).filter((p) => first.some((f) => f.metadata.uid === p.metadata.uid));
      return ps.length === 3 && ps.every((p) => p.metadata.deletionTimestamp) ? ps : undefined;
    }, { timeoutMs: 60_000 });
    // Before its eviction, each pod was marked not ready by the node lifecycle controller.
    for (const p of evicted) expect(isPodReady(p)).toBe(false);
    await expectEvictionEvents(evicted);
    const replaced = await waitFor('three new pods Ready on the other nodes', async () => {
      const ps = live(await podsOf('sim'));
      return ps.length === 3 && ps.every((p) => p.spec?.nodeName !== 'lonely-0' && isPodReady(p)) ? ps : undefined;
    }, { timeoutMs: 60_000 });
    expect(replaced.every((p) => ['sim-0', 'sim-1'].includes(p.spec?.nodeName ?? ''))).toBe(true);
  }, 240_000);

  it('a real agent killed with its pods: NotReady, pods recreated on the other node; restarted, no duplicate process', async () => {
    const ca = readCertDirCa(join(dir, 'apiserver-certs'));
    const start = async (name: string, cidr: string): Promise<ManagedProcess> => {
      const kubeconfig = join(dir, `${name}.kubeconfig`);
      await writeClientKubeconfig(kubeconfig, ca, { server: api.url, user: `system:node:${name}`, groups: ['system:nodes'] });
      const root = join(dir, name);
      agentRoots.push(root);
      return agent(name, [
        `--kubeconfig=${kubeconfig}`,
        `--node-name=${name}`,
        `--root-dir=${root}`,
        '--port=0',
        `--pod-cidr=${cidr}`,
        '--node-labels=pool=real',
        '--node-lease-duration-seconds=4',
        '--node-status-update-frequency=1s',
      ]);
    };
    const base = 100 + Math.floor(Math.random() * 100);
    const nodeA = await start('node-a', `127.1.${base}.0/24`);
    await waitFor('node-a Ready', async () => (await nodeReady('node-a')) === 'True', { timeoutMs: 60_000 });
    await new ResourceClient(rest, REPLICASETS).create(
      replicaSet('real', 2, { pool: 'real' }, {
        image: 'local/node',
        command: [process.execPath, '-e', KEEP_RUNNING],
        env: [{ name: 'POD_UID', valueFrom: { fieldRef: { fieldPath: 'metadata.uid' } } }],
      }),
    );
    const first = await waitFor('two pods Ready on node-a', async () => {
      const ps = live(await podsOf('real'));
      return ps.length === 2 && ps.every((p) => p.spec?.nodeName === 'node-a' && isPodReady(p)) ? ps : undefined;
    }, { timeoutMs: 90_000, detail: () => nodeA.logTail(10) });
    const firstUids = first.map((p) => p.metadata.uid ?? '');
    for (const uid of firstUids) expect(processesOf(uid, true)).toHaveLength(1);
    await start('node-b', `127.1.${base + 1}.0/24`);
    await waitFor('node-b Ready', async () => (await nodeReady('node-b')) === 'True', { timeoutMs: 60_000 });

    // The machine fails: the agent and every process of its pods die at once.
    await nodeA.kill('SIGKILL');
    for (const uid of firstUids) for (const pid of processesOf(uid)) process.kill(pid, 'SIGKILL');
    await waitFor('the pods’ processes gone', () => firstUids.every((u) => processesOf(u).length === 0));
    await expectUnreachable('node-a');
    const evicted = await waitFor('the pods on node-a evicted', async () => {
      const ps = (await podsOf('real')).filter((p) => firstUids.includes(p.metadata.uid ?? ''));
      return ps.length === 2 && ps.every((p) => p.metadata.deletionTimestamp) ? ps : undefined;
    }, { timeoutMs: 60_000 });
    await expectEvictionEvents(evicted);
    const replaced = await waitFor('two new pods Ready on node-b', async () => {
      const ps = live(await podsOf('real'));
      return ps.length === 2 && ps.every((p) => p.spec?.nodeName === 'node-b' && isPodReady(p)) ? ps : undefined;
    }, { timeoutMs: 90_000 });
    for (const p of replaced) expect(processesOf(p.metadata.uid ?? '', true)).toHaveLength(1);

    // The machine comes back: the agent finishes the evicted pods without starting them again.
    nodeA.start();
    await waitFor('node-a Ready again', async () => (await nodeReady('node-a')) === 'True', { timeoutMs: 60_000 });
    await waitFor('the stale pods finished', async () => {
      for (const p of evicted) {
        const got = await pods().get(NS, p.metadata.name ?? '').catch((e: unknown) => (isNotFound(e) ? undefined : p));
        if (got !== undefined && got.metadata.uid === p.metadata.uid) return false;
      }
      return true;
    }, { timeoutMs: 60_000, detail: () => nodeA.logTail(10) });
    await waitFor('the taints removed', async () => ((await nodes().get('', 'node-a')).spec?.taints ?? []).length === 0);
    for (const uid of firstUids) expect(processesOf(uid), `no process of evicted pod ${uid}`).toEqual([]);
    // Nor was one started and stopped meanwhile: each evicted pod's container was started once, on the first run.
    const events = (await new ResourceClient(rest, EVENTS).list(NS)).items as Array<KubeObject & { reason?: string; count?: number; involvedObject?: { uid?: string } }>;
    for (const uid of firstUids) {
      const starts = events.filter((e) => e.reason === 'Started' && e.involvedObject?.uid === uid).reduce((n, e) => n + (e.count ?? 1), 0);
      expect(starts, `Started events of evicted pod ${uid}`).toBe(1);
    }
    for (const p of replaced) expect(processesOf(p.metadata.uid ?? '', true)).toHaveLength(1);
    expect(live(await podsOf('real')).map((p) => p.metadata.uid).sort()).toEqual(replaced.map((p) => p.metadata.uid).sort());
  }, 300_000);
});
