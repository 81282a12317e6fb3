// `setpoint agent` as a process on `setpoint apiserver` on a real etcd (dist/: build first): the Node it
// registers and the Lease it renews; pods bound to it (spec.nodeName set, no scheduler) run as real
// processes with their status, events, restarts, crash loops, graceful deletion, and adoption by the next
// agent; bad input is a waiting reason or an event, never a crashed agent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/client/kube-object.js';
import { ResourceClient } from '../../src/client/resource-client.js';
import { LEASES, NODES } from '../../src/client/resource-types.js';
import { waitFor } from '../../src/harness/wait.js';
import { AgentCluster } from './helpers/agent-cluster.js';

const NODE = 'agent-e2e-1';

type Obj = KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };

describe('setpoint agent', () => {
  let c: AgentCluster;
  let nodes: ResourceClient<Obj>;
  let leases: ResourceClient<Obj>;

  beforeAll(async () => {
    c = await AgentCluster.start();
    nodes = new ResourceClient<Obj>(c.admin, NODES);
    leases = new ResourceClient<Obj>(c.admin, LEASES);
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
    const first = beat(node);
    await waitFor('a later heartbeat', async () => beat(await nodes.get('', NODE)) !== first, { timeoutMs: 30_000 });
  });
});

