// `setpoint scheduler` as real processes, leader-elected, on a real `setpoint apiserver` process on a real
// etcd 3.4, with plain Node objects created through the API (n1, n2 with room, n3 tainted). Pods get bound
// by the leader with `Scheduled` events; an impossible pod gets Kubernetes' exact FitError message in its
// PodScheduled condition and its FailedScheduling event; SIGKILL of the leader hands over to a standby
// (the failover time is printed, not asserted); SIGTERM releases the lease for the next one. The fencing
// test holds the leader's requests in a proxy so its binds are in flight, SIGSTOPs it, lets the standby
// take over and bind every pod, then lets the held binds through and SIGCONTs it: each of them is refused
// with a 409 naming the lease, the holder and the caller, and every pod was bound exactly once. Then
// preemption by PriorityClass, and the unschedulable pod moved back and bound when a big node appears.
// The tests run in order on one cluster (pods and nodes accumulate; later tests rely on the earlier).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LeaseObject } from '../../src/client/lease-record.js';
import type { KubeObject } from '../../src/client/kube-object.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { EVENTS, LEASES, NODES, PODS, PRIORITYCLASSES } from '../../src/client/resource-types.js';
import { RestClient } from '../../src/client/rest-client.js';
import { renderKubeconfig } from '../../src/apiserver/pki/kubeconfig.js';
import { startApiServerProcess, type ApiServerProcess } from '../../src/harness/apiserver-process.js';
import { HoldProxy } from '../../src/harness/hold-proxy.js';
import { startLeaderElected, type LeaderElectedProcess } from '../../src/harness/kinds/leader-elected-process.js';
import { setpointMain } from '../../src/harness/setpoint-main.js';
import { waitFor } from '../../src/harness/wait.js';
import { StoreTestCluster } from '../etcd-client/helpers/store-cluster.js';

type Sched = LeaderElectedProcess;

const IMPOSSIBLE_MESSAGE =
  '0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.';

const pod = (name: string, cpu = '10m', priorityClassName?: string): KubeObject => ({
  metadata: { name, namespace: 'default' },
  spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu } } }], ...(priorityClassName !== undefined ? { priorityClassName } : {}) },
});

describe('setpoint scheduler processes', () => {
  let dir: string;
  let etcd: StoreTestCluster;
  let api: ApiServerProcess;
  let rest: RestClient;
  let pods: ResourceClient;
  let leases: ResourceClient<LeaseObject>;
  const running: Sched[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'scheduler-processes-'));
    etcd = await StoreTestCluster.start('etcd');
    api = await startApiServerProcess({ dir, etcdServers: etcd.endpoints() });
    rest = new RestClient(api.clientConfig);
    pods = new ResourceClient(rest, PODS);
    leases = new ResourceClient<LeaseObject>(rest, LEASES);
    const nodes = new ResourceClient(rest, NODES);
    for (const [name, taints] of [
      ['n1', []],
      ['n2', []],
      ['n3', [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }]],
    ] as const) {
      const resources = { cpu: '4', memory: '32Gi', pods: '110' };
      const made = await nodes.create({ metadata: { name, labels: { 'kubernetes.io/hostname': name } }, spec: { taints } });
      await nodes.updateStatus({
        ...made,
        status: { capacity: resources, allocatable: resources, conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }] },
      });
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all(running.map((s) => s.proc.kill('SIGKILL')));
    rest?.close();
    await api?.stop();
    await etcd?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  async function startScheduler(name: string, flags: readonly string[], kubeconfig = api.kubeconfig): Promise<Sched> {
    const s = await startLeaderElected('scheduler', { name, dir, kubeconfig, flags: ['--log-level=debug', ...flags] });
    running.push(s);
    return s;
  }

  const holder = async (lease: string): Promise<LeaseObject['spec']> => (await leases.get('kube-system', lease).catch(() => undefined))?.spec;

  async function waitLeader(lease: string, s: Sched): Promise<void> {
    await s.proc.waitReady(`${s.name} to hold ${lease}`, async () => (await holder(lease))?.holderIdentity === s.identity, 60_000);
  }

  async function waitBound(names: readonly string[]): Promise<Map<string, string>> {
    return waitFor(
      `${names.length} pods to be bound`,
      async () => {
        const list = await pods.list('default');
        const bound = new Map(list.items.map((p) => [p.metadata?.name ?? '', String((p.spec as { nodeName?: string }).nodeName ?? '')]));
        return names.every((n) => (bound.get(n) ?? '') !== '') ? bound : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
  }

  const eventsFor = async (name: string): Promise<KubeObject[]> => (await new ResourceClient(rest, EVENTS).list('default', { fieldSelector: `involvedObject.name=${name}` })).items;

  /** SIGKILLs (or SIGTERMs) the holder and waits for `next` to hold the lease; returns the milliseconds between. */
  async function handOver(lease: string, from: Sched, next: Sched, signal: NodeJS.Signals): Promise<number> {
    const t0 = performance.now();
    const exit = await from.proc.kill(signal);
    if (signal === 'SIGTERM') expect(exit.code).toBe(0);
    await waitFor(`${next.name} to take over ${lease}`, async () => (await holder(lease))?.holderIdentity === next.identity, { timeoutMs: 60_000, intervalMs: 20 });
    return performance.now() - t0;
  }

  const LEASE = 'kube-scheduler';

  it.each([
    [['--leader-elect-lease-duration', '2'], 'setpoint scheduler: invalid argument "2" for "--leader-elect-lease-duration" flag: time: missing unit in duration "2"'],
    [['--leader-elect-renew-deadline', '5s'], 'setpoint scheduler: leader election: leaseDuration must be greater than renewDeadline'],
    [['--kubeconfig', '/nonexistent/kubeconfig'], 'setpoint scheduler: kubeconfig: cannot read /nonexistent/kubeconfig: ENOENT'],
  ])('%j: one line, exit 2', (args, line) => {
    const r = spawnSync(process.execPath, [setpointMain(), 'scheduler', ...args], { encoding: 'utf8', timeout: 60_000 });
    expect([r.status, `${r.stdout}${r.stderr}`.trim()]).toEqual([2, line]);
  });

  it('binds pods with Scheduled events and gives an impossible pod the exact FitError message', async () => {
    const a = await startScheduler('a', []);
    await waitLeader(LEASE, a);
    await startScheduler('b', []);
    const names = Array.from({ length: 10 }, (_, i) => `p${i}`);
    for (const n of names) await pods.create(pod(n));
    await pods.create(pod('impossible', '100'));
    const bound = await waitBound(names);
    for (const n of names) expect(['n1', 'n2']).toContain(bound.get(n));
    const cond = await waitFor('the impossible pod to be marked unschedulable', async () => {
      const p = (await pods.get('default', 'impossible')) as { status?: { conditions?: Record<string, unknown>[] } };
      return p.status?.conditions?.find((c) => c.type === 'PodScheduled');
    });
    expect(cond).toMatchObject({ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: IMPOSSIBLE_MESSAGE });
    const failed = await waitFor('a FailedScheduling event', async () => (await eventsFor('impossible')).find((e) => e.reason === 'FailedScheduling'));
    expect(failed).toMatchObject({ type: 'Warning', message: IMPOSSIBLE_MESSAGE, source: { component: 'default-scheduler' }, involvedObject: { kind: 'Pod', name: 'impossible' } });
    const scheduled = await waitFor('Scheduled events', async () => (await eventsFor('p0')).find((e) => e.reason === 'Scheduled'), {
      detail: () => JSON.stringify(a.lines.filter((l) => Number(l.level) >= 40).slice(0, 5)),
    });
    expect(scheduled).toMatchObject({ type: 'Normal', message: `Successfully assigned default/p0 to ${bound.get('p0')}` });
    // Only the leader wrote: the Lease's transitions are unchanged, and none of its writes was refused
    // (a renewal racing a fenced write re-checks the Lease rather than failing the write).
    expect((await holder(LEASE))?.leaseTransitions).toBe(0);
    expect(a.lines.filter((l) => l.msg === 'scheduling: a write failed' || l.msg === 'could not write an event')).toEqual([]);
  }, 180_000);

  it('fails over when the leader is SIGKILLed, and hands over on SIGTERM after releasing the lease', async () => {
    const times: number[] = [];
    let leader = running.find((s) => s.name === 'a')!;
    let standby = running.find((s) => s.name === 'b')!;
    for (let trial = 1; trial <= 5; trial++) {
      times.push(await handOver(LEASE, leader, standby, 'SIGKILL'));
      // Scheduling continues under the new leader.
      await pods.create(pod(`after-kill-${trial}`));
      await waitBound([`after-kill-${trial}`]);
      leader = standby;
      standby = await startScheduler(`k${trial}`, []);
    }
    const sorted = [...times].sort((x, y) => x - y);
    console.log(`scheduler failover after SIGKILL (lease 2s, renew 1.5s, retry 0.4s): ${times.map((t) => `${(t / 1000).toFixed(2)}s`).join(', ')}; median ${(sorted[2]! / 1000).toFixed(2)}s`);
    const before = (await holder(LEASE))?.leaseTransitions ?? 0;
    const graceful = await handOver(LEASE, leader, standby, 'SIGTERM');
    console.log(`scheduler handover after SIGTERM (the lease released): ${(graceful / 1000).toFixed(2)}s from the signal`);
    expect(leader.lines.some((l) => l.msg === 'released leader lease')).toBe(true);
    expect((await holder(LEASE))?.leaseTransitions).toBe(before + 1);
    await pods.create(pod('after-term'));
    await waitBound(['after-term']);
    await standby.proc.kill('SIGTERM');
  }, 300_000);

  it("refuses a deposed leader's in-flight binds (409 naming the lease, holder and caller) and binds every pod exactly once", async () => {
    const lease = 'fenced-scheduler';
    // A longer renew deadline than the default, so the leader is still leading when it is paused.
    const flags = [`--leader-elect-resource-name=${lease}`, '--leader-elect-lease-duration=6s', '--leader-elect-renew-deadline=5s', '--leader-elect-retry-period=500ms'];
    const proxy = new HoldProxy(api.port);
    const proxyPort = await proxy.start();
    const viaProxy = join(dir, 'via-proxy.kubeconfig');
    writeFileSync(viaProxy, renderKubeconfig({ server: `https://127.0.0.1:${proxyPort}`, caPem: api.caPem, userName: 'admin', clientCertPem: api.admin.certPem, clientKeyPem: api.admin.keyPem }), { mode: 0o600 });
    const watchAc = new AbortController();
    try {
      const a = await startScheduler('fa', flags, viaProxy);
      await waitLeader(lease, a);
      const b = await startScheduler('fb', flags);
      // Every change to every pod from here on, to count bindings.
      const names = Array.from({ length: 12 }, (_, i) => `f${i}`);
      const nodeNames = new Map<string, Set<string>>();
      const from = (await pods.list('default')).metadata.resourceVersion ?? '';
      const watching = (async () => {
        for await (const ev of pods.watch('default', { resourceVersion: from, signal: watchAc.signal })) {
          const n = ev.object.metadata?.name ?? '';
          const node = String((ev.object.spec as { nodeName?: string } | undefined)?.nodeName ?? '');
          if (node !== '') nodeNames.set(n, (nodeNames.get(n) ?? new Set()).add(node));
        }
      })().catch(() => undefined);

      proxy.hold();
      for (const n of names) await pods.create(pod(n));
      const bindsOf = (s: Sched): Set<string> => new Set(s.lines.filter((l) => l.msg === 'binding').map((l) => String(l.pod)));
      await waitFor('the leader to send its binds', () => names.every((n) => bindsOf(a).has(`default/${n}`)), { timeoutMs: 30_000 });
      a.proc.pause();
      await waitLeader(lease, b);
      const bound = await waitBound(names);
      proxy.release();
      a.proc.resume();
      const exit = await a.proc.exited(60_000);
      // As kube-scheduler: a lost lease ends the process.
      expect(exit.code).toBe(1);
      expect(a.lines.some((l) => l.msg === 'leaderelection lost')).toBe(true);

      const refusal = `lease kube-system/${lease} is held by ${JSON.stringify(b.identity)} (transitions 1), not by the caller ${JSON.stringify(a.identity)} (transitions 0)`;
      const refused = new Set(
        a.lines
          .filter((l) => l.msg === 'scheduling: a write failed' && String((l.err as { message?: string } | undefined)?.message ?? '') === `Operation cannot be fulfilled on leases.coordination.k8s.io "${lease}": ${refusal}`)
          .map((l) => String(l.pod)),
      );
      expect([...refused].sort()).toEqual(names.map((n) => `default/${n}`).sort());
      // Every pod was bound once, by the new leader, and announced once.
      watchAc.abort();
      await watching;
      for (const n of names) {
        expect([...(nodeNames.get(n) ?? [])]).toEqual([bound.get(n)]);
        // The event follows the binding (the recorder writes in the background).
        const scheduled = await waitFor(`the Scheduled event of ${n}`, async () => {
          const evs = (await eventsFor(n)).filter((e) => e.reason === 'Scheduled');
          return evs.length > 0 ? evs : undefined;
        });
        expect(scheduled.map((e) => [e.message, e.count])).toEqual([[`Successfully assigned default/${n} to ${bound.get(n)}`, 1]]);
      }
      const leaseNow = await holder(lease);
      console.log(`fencing: ${refused.size} in-flight binds of the deposed leader refused; lease ${lease} held by the standby at transition ${leaseNow?.leaseTransitions}`);
      await b.proc.kill('SIGTERM');
    } finally {
      watchAc.abort();
      proxy.release();
      await proxy.stop();
    }
  }, 300_000);

  it('preempts a lower-priority pod for a higher one: Preempted event, victim deleted, nominatedNodeName, then bound there', async () => {
    const classes = new ResourceClient(rest, PRIORITYCLASSES);
    await classes.create({ metadata: { name: 'low' }, value: 10 });
    await classes.create({ metadata: { name: 'high' }, value: 1000 });
    const s = await startScheduler('pre', []);
    await waitLeader(LEASE, s);
    // No node agent runs here: finish the victims' graceful deletion as a kubelet would.
    const ac = new AbortController();
    const reaping = (async () => {
      for await (const ev of pods.watch('default', { signal: ac.signal })) {
        if (ev.type !== 'DELETED' && ev.object.metadata?.deletionTimestamp) await pods.delete('default', ev.object.metadata.name ?? '', { gracePeriodSeconds: 0 }).catch(() => undefined);
      }
    })().catch(() => undefined);
    try {
      await pods.create(pod('low-1', '3500m', 'low'));
      await pods.create(pod('low-2', '3500m', 'low'));
      const bound = await waitBound(['low-1', 'low-2']);
      expect(new Set([bound.get('low-1'), bound.get('low-2')])).toEqual(new Set(['n1', 'n2']));
      await pods.create(pod('vip', '3500m', 'high'));
      const vipNode = (await waitBound(['vip'])).get('vip');
      const victim = bound.get('low-1') === vipNode ? 'low-1' : 'low-2';
      const survivor = victim === 'low-1' ? 'low-2' : 'low-1';
      const vip = (await pods.get('default', 'vip')) as { metadata: { uid: string }; status?: { nominatedNodeName?: string } };
      expect(vip.status?.nominatedNodeName).toBe(vipNode);
      await waitFor(`${victim} to be gone`, async () => (await pods.get('default', victim).catch(() => undefined)) === undefined);
      expect((await pods.get('default', survivor)).metadata?.name).toBe(survivor);
      const preempted = await waitFor('the Preempted event', async () => (await eventsFor(victim)).find((e) => e.reason === 'Preempted'));
      expect(preempted).toMatchObject({ type: 'Normal', message: `Preempted by pod ${vip.metadata.uid} on node ${vipNode}` });
    } finally {
      ac.abort();
      await reaping;
      await s.proc.kill('SIGTERM');
    }
  }, 180_000);

  it('moves the unschedulable pod back when a node that fits it is added, and binds it there', async () => {
    const s = await startScheduler('grow', []);
    try {
      await waitLeader(LEASE, s);
      const nodes = new ResourceClient(rest, NODES);
      const resources = { cpu: '128', memory: '256Gi', pods: '110' };
      const made = await nodes.create({ metadata: { name: 'big', labels: { 'kubernetes.io/hostname': 'big' } } });
      await nodes.updateStatus({ ...made, status: { capacity: resources, allocatable: resources, conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }] } });
      expect((await waitBound(['impossible'])).get('impossible')).toBe('big');
      const p = (await pods.get('default', 'impossible')) as { status?: { conditions?: Record<string, unknown>[] } };
      expect(p.status?.conditions?.find((c) => c.type === 'PodScheduled')).toMatchObject({ status: 'True' });
    } finally {
      await s.proc.kill('SIGTERM');
    }
  }, 120_000);
});
