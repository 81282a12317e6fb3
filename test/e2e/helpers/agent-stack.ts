// The whole stack a user runs, as real processes: one `setpoint server` member (store, API server,
// scheduler, controller manager) on free ports, or the same pieces as separate processes (a store member,
// `setpoint apiserver`, `setpoint scheduler`, `setpoint controller-manager` with flags of the test's own);
// `setpoint agent`s with their node identities and quick back-off settings, an admin kubeconfig, and
// kubectl on it. stop() kills the agents and the control plane, then the pods the agents left running, and
// removes the directory.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopAdoptedPods } from '../../../src/agent/stop-pods.js';
import { issueClientCert } from '../../../src/apiserver/pki/certificates.js';
import { renderKubeconfig } from '../../../src/apiserver/pki/kubeconfig.js';
import { loadKubeconfig } from '../../../src/client/kubeconfig.js';
import { RestClient } from '../../../src/client/rest-client.js';
import { startApiServerProcess } from '../../../src/harness/apiserver-process.js';
import { freePorts } from '../../../src/harness/free-port.js';
import { startLeaderElected } from '../../../src/harness/kinds/leader-elected-process.js';
import { readyz } from '../../../src/harness/kinds/apiserver.js';
import { ManagedProcess } from '../../../src/harness/managed-process.js';
import { serverMemberArgs } from '../../../src/harness/server-members.js';
import { setpointMain } from '../../../src/harness/setpoint-main.js';
import { runKubectl, type KubectlResult } from '../../apiserver/helpers/kubectl-runner.js';
import { StoreTestCluster } from '../../etcd-client/helpers/store-cluster.js';

/** /proc/<pid>/stat's fields after the command name: [state, ppid, pgrp, …]. */
function statFields(pid: string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The pids whose parent is `pid`. */
export function childrenOf(pid: number): number[] {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d) && statFields(d)?.[1] === String(pid)).map(Number);
}

/**
 * The process-group leaders that run a container under `root` (the agent's root dir), by
 * `<pod uid>/<container>`: each container is one group, led by the agent's wrapper, whose environment
 * names the container's directory (SETPOINT_ROOT=<root>/pods/<uid>/root/<container>). Exec probes are
 * groups of their own with the same environment: count only pods without them.
 */
export function containerGroups(root: string): Map<string, number[]> {
  const prefix = `SETPOINT_ROOT=${join(root, 'pods')}/`;
  const out = new Map<string, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const f = statFields(d);
    if (!f || f[2] !== d || f[0] === 'Z') continue;
    let env: string;
    try {
      env = readFileSync(`/proc/${d}/environ`, 'utf8');
    } catch {
      continue; // gone, or not ours
    }
    const v = env.split('\0').find((e) => e.startsWith(prefix));
    if (v === undefined) continue;
    const [uid, , container] = v.slice(prefix.length).split('/');
    const key = `${uid ?? ''}/${container ?? ''}`;
    out.set(key, [...(out.get(key) ?? []), Number(d)].sort((a, b) => a - b));
  }
  return out;
}

export class AgentStack {
  readonly agents = new Map<string, ManagedProcess>();
  /** Each agent's pods take their own /24 of 127.1.0.0/16, apart from the other suites' blocks. */
  private readonly firstBlock = 10 + Math.floor(Math.random() * 80);

  private constructor(
    readonly dir: string,
    /** The cluster CA's directory (ca.crt, ca.key). */
    private readonly caDir: string,
    readonly apiPort: number,
    readonly adminKubeconfig: string,
    readonly admin: RestClient,
    /** Stops the control plane, last first. */
    private readonly stops: (() => Promise<unknown>)[],
  ) {}

  /** One `setpoint server` member; `startAgent()` adds nodes. */
  static async start(): Promise<AgentStack> {
    const dir = mkdtempSync(join(tmpdir(), 'agent-acceptance-'));
    const p = await freePorts(['client', 'peer', 'api'] as const);
    const server = new ManagedProcess(
      'setpoint server m1',
      {
        bin: process.execPath,
        args: serverMemberArgs(dir, 'm1', p, `m1=http://127.0.0.1:${p.peer}`),
        env: { SETPOINT_LOG_FORMAT: 'json' },
      },
      { logFile: join(dir, 'm1.log') },
    );
    server.start();
    const stops = [() => killMember(server)];
    try {
      const caFile = join(dir, 'pki', 'ca.crt');
      await server.waitReady('its API server ready', async () => {
        try {
          return (await readyz(p.api, readFileSync(caFile, 'utf8'))) === 200;
        } catch {
          return false;
        }
      }, 120_000);
      const ca = { certPem: readFileSync(caFile, 'utf8'), keyPem: readFileSync(join(dir, 'pki', 'ca.key'), 'utf8') };
      const cert = await issueClientCert(ca, { user: 'admin', groups: ['system:masters'] });
      const adminKubeconfig = join(dir, 'admin.kubeconfig');
      writeFileSync(adminKubeconfig, renderKubeconfig({ server: `https://127.0.0.1:${p.api}`, caPem: ca.certPem, userName: 'admin', clientCertPem: cert.certPem, clientKeyPem: cert.keyPem }));
      return new AgentStack(dir, join(dir, 'pki'), p.api, adminKubeconfig, new RestClient(loadKubeconfig({ path: adminKubeconfig }).config), stops);
    } catch (e) {
      await stopAll(stops);
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
  }

  /** A store member, `setpoint apiserver`, `setpoint scheduler` and `setpoint controller-manager` with `cmFlags`. */
  static async startSplit(cmFlags: readonly string[]): Promise<AgentStack> {
    const dir = mkdtempSync(join(tmpdir(), 'agent-acceptance-'));
    const stops: (() => Promise<unknown>)[] = [];
    try {
      const store = await StoreTestCluster.start('setpoint');
      stops.push(() => store.stop());
      const api = await startApiServerProcess({ dir, etcdServers: store.endpoints() });
      stops.push(() => api.stop());
      for (const [component, flags] of [['scheduler', []], ['controller-manager', cmFlags]] as const) {
        const p = await startLeaderElected(component, { name: component, dir, kubeconfig: api.kubeconfig, flags });
        stops.push(() => p.proc.kill('SIGKILL'));
      }
      return new AgentStack(dir, join(dir, 'apiserver-certs'), api.port, api.kubeconfig, new RestClient(api.clientConfig), stops);
    } catch (e) {
      await stopAll(stops);
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
  }

  rootOf(node: string): string {
    return join(this.dir, 'agents', node);
  }

  /** The first agent's root. */
  get nodeRoot(): string {
    return this.rootOf('node-1');
  }

  get agent(): ManagedProcess | undefined {
    return this.agents.get('node-1');
  }

  /** Starts (or starts again) the agent of `node` and waits for it to say it started. */
  async startAgent(node = 'node-1', extra: readonly string[] = []): Promise<ManagedProcess> {
    const kc = join(this.dir, `${node}.kubeconfig`);
    const ca = { certPem: readFileSync(join(this.caDir, 'ca.crt'), 'utf8'), keyPem: readFileSync(join(this.caDir, 'ca.key'), 'utf8') };
    const cert = await issueClientCert(ca, { user: `system:node:${node}`, groups: ['system:nodes'] });
    writeFileSync(kc, renderKubeconfig({ server: `https://127.0.0.1:${this.apiPort}`, caPem: ca.certPem, userName: `system:node:${node}`, clientCertPem: cert.certPem, clientKeyPem: cert.keyPem }));
    // A node keeps its block across restarts: the order nodes were first started in.
    const known = [...this.agents.keys()];
    const index = known.includes(node) ? known.indexOf(node) : known.length;
    const agent = new ManagedProcess(
      `setpoint agent ${node}`,
      {
        bin: process.execPath,
        args: [
          setpointMain(),
          'agent',
          `--kubeconfig=${kc}`,
          `--node-name=${node}`,
          `--root-dir=${this.rootOf(node)}`,
          '--port=0',
          `--pod-cidr=127.1.${this.firstBlock + index}.0/24`,
          '--node-status-update-frequency=2s',
          '--crash-loop-back-off-initial=1s',
          '--crash-loop-back-off-max=8s',
          ...extra,
        ],
        env: { SETPOINT_LOG_FORMAT: 'json' },
      },
      { logFile: join(this.dir, `${node}.log`) },
    );
    const mark = agent.logMark();
    agent.start();
    this.agents.set(node, agent);
    await agent.waitReady('agent started', () => agent.logged('agent started', mark).length > 0, 60_000);
    return agent;
  }

  /** kubectl as a user runs it, on the admin kubeconfig. */
  kubectl(...args: string[]): Promise<KubectlResult> {
    return runKubectl(this.adminKubeconfig, join(this.dir, 'kubectl-home'), args);
  }

  async stop(): Promise<void> {
    this.admin.close();
    for (const a of this.agents.values()) await a.kill('SIGKILL');
    for (const node of this.agents.keys()) await stopAdoptedPods(this.rootOf(node)).catch(() => undefined);
    await stopAll(this.stops);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

async function stopAll(stops: readonly (() => Promise<unknown>)[]): Promise<void> {
  for (const stop of [...stops].reverse()) await stop().catch(() => undefined);
}

/** Kills a member, then each component it started (they would outlive it; alive, it restarts them). */
async function killMember(m: ManagedProcess): Promise<void> {
  const pid = m.pid;
  const components = pid !== undefined ? childrenOf(pid) : [];
  await m.kill('SIGKILL');
  for (const c of components) {
    try {
      process.kill(c, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}
