// A control plane for agent tests, as real processes: etcd 3.4, `setpoint apiserver` on it (from dist/, so
// build first), and `setpoint agent`s with a node identity (system:node:<name>) from the cluster CA. An
// admin client and kubeconfig for the test. stop() kills every process, then kills the pods the agents
// left running (a runtime on each root adopts them and stops them), and removes the directory.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopAdoptedPods } from '../../../src/agent/stop-pods.js';
import { issueClientCert } from '../../../src/apiserver/pki/certificates.js';
import { renderKubeconfig } from '../../../src/apiserver/pki/kubeconfig.js';
import { loadKubeconfig } from '../../../src/client/kubeconfig.js';
import { RestClient } from '../../../src/client/rest-client.js';
import { registerChild } from '../../../src/harness/children.js';
import { freePort } from '../../../src/harness/free-port.js';
import { waitFor } from '../../../src/harness/wait.js';
import { startReferenceEtcd, type ReferenceEtcd } from '../../server/helpers/etcd-reference.js';

// From test/ under vitest, or from dist/test/ when a benchmark uses this helper.
const MAIN = fileURLToPath(new URL(import.meta.url.includes('/dist/test/') ? '../../../src/cli/main.js' : '../../../dist/src/cli/main.js', import.meta.url));

export interface Proc {
  readonly child: ChildProcess;
  readonly output: () => string;
  readonly exited: Promise<number | null>;
}

export function startMain(args: readonly string[]): Proc {
  let output = '';
  const child = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SETPOINT_LOG_FORMAT: 'json' } });
  registerChild(child);
  // SETPOINT_TEST_LOGS=DIR keeps each process's output in DIR (for a failure seen only on a loaded machine).
  const keep = process.env.SETPOINT_TEST_LOGS;
  const file = keep !== undefined ? join(keep, `${args[0] ?? 'main'}-${Date.now()}.log`) : undefined;
  const add = (d: Buffer): void => {
    output += d.toString();
    if (file !== undefined) appendFileSync(file, d);
  };
  child.stdout?.on('data', add);
  child.stderr?.on('data', add);
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

export async function kill(p: Proc | undefined, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill(signal);
  await p.exited;
}

export class AgentCluster {
  readonly agents = new Map<string, Proc>();
  private readonly roots = new Set<string>();

  private constructor(
    readonly dir: string,
    readonly etcd: ReferenceEtcd,
    readonly apiserver: Proc,
    readonly server: string,
    readonly adminKubeconfig: string,
    readonly admin: RestClient,
    /** Each cluster's pods take their own /24 of 127.1.0.0/16, so parallel files never share an address. */
    readonly podCidr: string,
  ) {}

  static async start(): Promise<AgentCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'setpoint-agent-e2e-'));
    let etcd: ReferenceEtcd | undefined;
    let api: Proc | undefined;
    try {
      etcd = await startReferenceEtcd();
      const port = await freePort();
      api = startMain(['apiserver', '--etcd-servers', etcd.endpoint, '--secure-port', String(port), '--bind-address', '127.0.0.1', '--cert-dir', join(dir, 'pki')]);
      const started = api;
      await waitFor('the API server to listen', () => {
        if (started.child.exitCode !== null) throw new Error(`apiserver exited:\n${started.output()}`);
        return started.output().includes('serving securely');
      }, { timeoutMs: 60_000 });
      const server = `https://127.0.0.1:${port}`;
      const ca = { certPem: readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8'), keyPem: readFileSync(join(dir, 'pki', 'ca.key'), 'utf8') };
      const adminCert = await issueClientCert(ca, { user: 'admin', groups: ['system:masters'] });
      const adminKubeconfig = join(dir, 'admin.kubeconfig');
      writeFileSync(adminKubeconfig, renderKubeconfig({ server, caPem: ca.certPem, userName: 'admin', clientCertPem: adminCert.certPem, clientKeyPem: adminCert.keyPem }));
      const admin = new RestClient(loadKubeconfig({ path: adminKubeconfig }).config);
      await waitFor('the API server to be ready', async () => {
        try {
          await admin.request({ path: '/api/v1/namespaces/kube-node-lease' });
          return true;
        } catch {
          return false;
        }
      }, { timeoutMs: 60_000 });
      const block = 100 + Math.floor(Math.random() * 100);
      return new AgentCluster(dir, etcd, api, server, adminKubeconfig, admin, `127.1.${block}.0/24`);
    } catch (e) {
      await kill(api);
      await etcd?.stop();
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
  }

  rootOf(node: string): string {
    return join(this.dir, 'agents', node);
  }

  async nodeKubeconfig(node: string): Promise<string> {
    const ca = { certPem: readFileSync(join(this.dir, 'pki', 'ca.crt'), 'utf8'), keyPem: readFileSync(join(this.dir, 'pki', 'ca.key'), 'utf8') };
    const cert = await issueClientCert(ca, { user: `system:node:${node}`, groups: ['system:nodes'] });
    const path = join(this.dir, `${node}.kubeconfig`);
    writeFileSync(path, renderKubeconfig({ server: this.server, caPem: ca.certPem, userName: `system:node:${node}`, clientCertPem: cert.certPem, clientKeyPem: cert.keyPem }));
    return path;
  }

  /** Starts (or restarts) the agent for `node`, with quick back-off and status settings. */
  async startAgent(node: string, extra: readonly string[] = []): Promise<Proc> {
    const root = this.rootOf(node);
    this.roots.add(root);
    const p = startMain([
      'agent',
      '--kubeconfig',
      await this.nodeKubeconfig(node),
      '--node-name',
      node,
      '--root-dir',
      root,
      '--port',
      '0',
      '--pod-cidr',
      this.podCidr,
      '--node-status-update-frequency',
      '2s',
      '--crash-loop-back-off-initial',
      '500ms',
      '--crash-loop-back-off-max',
      '4s',
      '--log-level',
      'debug',
      ...extra,
    ]);
    this.agents.set(node, p);
    await waitFor(`agent ${node} to start`, () => {
      if (p.child.exitCode !== null) throw new Error(`agent exited:\n${p.output()}`);
      return p.output().includes('agent started');
    }, { timeoutMs: 60_000 });
    return p;
  }

  async stop(): Promise<void> {
    for (const p of this.agents.values()) await kill(p);
    for (const root of this.roots) {
      try {
        await stopAdoptedPods(root);
      } catch {
        // nothing adoptable left
      }
    }
    await kill(this.apiserver);
    await this.etcd.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
