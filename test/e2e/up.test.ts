// `setpoint up` (what `npm start` runs) end to end, as a newcomer meets it: the built command as a real
// process on free ports, its printed instructions, kubectl on the kubeconfig it writes: three Ready nodes,
// the example Deployment's pods answering HTTP on their pod addresses, scaled to 5 and back to 3, rolled out
// with `kubectl set env` while a client loop finds at least 3 of them answering at every check. Ctrl-C
// (SIGINT) leaves no process behind (nothing whose command line or environment names the data dir), and a
// second start on the same data dir keeps the Deployment and runs its pods again.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '../../src/harness/free-port.js';
import { ManagedProcess } from '../../src/harness/managed-process.js';
import { setpointMain } from '../../src/harness/setpoint-main.js';
import { waitFor } from '../../src/harness/wait.js';
import { runKubectl, type KubectlResult } from '../apiserver/helpers/kubectl-runner.js';
import { answeringLoop } from './helpers/answering-loop.js';

const HELLO = fileURLToPath(new URL('../../examples/hello-deployment.yaml', import.meta.url));
const LONG = 180_000;

interface PodView {
  readonly name: string;
  readonly ip: string;
  readonly ready: boolean;
  readonly terminating: boolean;
}

/** The pids of live processes whose command line or environment mentions `needle`, with their command lines. */
function processesNaming(needle: string): { pid: number; cmd: string }[] {
  const out: { pid: number; cmd: string }[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      const env = readFileSync(`/proc/${d}/environ`, 'utf8');
      if (cmd.includes(needle) || env.includes(needle)) out.push({ pid: Number(d), cmd: cmd.split('\0').join(' ').trim() });
    } catch {
      // gone meanwhile, or not ours
    }
  }
  return out;
}

function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

describe('setpoint up, driven with kubectl', () => {
  const dir = mkdtempSync(join(tmpdir(), 'setpoint-up-'));
  const dataDir = join(dir, 'state');
  const kubeconfig = join(dataDir, 'kubeconfig');
  let up: ManagedProcess | undefined;
  let args: string[] = [];
  /** The hello pods' names when the first `setpoint up` was stopped. */
  let stopped: string[] = [];

  const kubectl = (...a: string[]): Promise<KubectlResult> => runKubectl(kubeconfig, join(dir, 'kubectl-home'), a);

  /** Starts `setpoint up` and waits for its instructions. */
  const start = async (): Promise<ManagedProcess> => {
    const p = new ManagedProcess('setpoint up', { bin: process.execPath, args }, { capture: true, logFile: join(dir, `up-${Date.now()}.log`) });
    up = p;
    p.start();
    await p.waitReady('its instructions', () => p.stdout.includes('The cluster is up.'), LONG);
    return p;
  };

  const pods = async (): Promise<PodView[] | undefined> => {
    const r = await kubectl('get', 'pods', '-l', 'app=hello', '-o', 'json');
    if (r.code !== 0) return undefined;
    const list = JSON.parse(r.stdout) as {
      items: { metadata: { name: string; deletionTimestamp?: string }; status?: { podIP?: string; conditions?: { type: string; status: string }[] } }[];
    };
    return list.items.map((p) => ({
      name: p.metadata.name,
      ip: p.status?.podIP ?? '',
      ready: p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
      terminating: p.metadata.deletionTimestamp !== undefined,
    }));
  };

  /** What each pod answers on its address (undefined where nothing answers). */
  const answers = async (list: readonly PodView[]): Promise<(string | undefined)[]> =>
    Promise.all(
      list.map(async (p) => {
        if (p.ip === '') return undefined;
        try {
          const res = await fetch(`http://${p.ip}:8080/`, { signal: AbortSignal.timeout(3000) });
          return await res.text();
        } catch {
          return undefined;
        }
      }),
    );

  /** Exactly `n` hello pods, every one Ready and answering "<greeting> from <its name>" on its pod IP. */
  const helloPodsAnswer = (n: number, greeting = 'hello'): Promise<PodView[]> => {
    let seen = '';
    return waitFor(
      `${n} hello pods answering HTTP on their pod IPs`,
      async () => {
        const list = await pods();
        seen = JSON.stringify(list);
        if (list?.length !== n || list.some((p) => !p.ready || p.terminating)) return undefined;
        const got = await answers(list);
        seen += ` answers ${JSON.stringify(got)}`;
        return list.every((p, i) => got[i] === `${greeting} from ${p.name}\n`) && list;
      },
      { timeoutMs: LONG, intervalMs: 500, detail: () => seen },
    );
  };

  const nodesReady = (): Promise<boolean> =>
    waitFor(
      'node-1, node-2 and node-3 Ready in kubectl get nodes',
      async () => {
        const r = await kubectl('get', 'nodes', '--no-headers');
        const rows = r.stdout.trim().split('\n').map((l) => l.split(/\s+/));
        return ['node-1', 'node-2', 'node-3'].every((n) => rows.some((row) => row[0] === n && row[1] === 'Ready'));
      },
      { timeoutMs: LONG, intervalMs: 1000 },
    );

  beforeAll(async () => {
    const ports = await Promise.all([0, 1, 2].map(() => freePorts(['client', 'peer', 'api'] as const)));
    const list = (k: 'client' | 'peer' | 'api'): string => ports.map((p) => p[k]).join(',');
    args = [setpointMain(), 'up', `--data-dir=${dataDir}`, `--client-ports=${list('client')}`, `--peer-ports=${list('peer')}`, `--api-ports=${list('api')}`, '--agent-ports=0,0,0'];
  });

  afterAll(async () => {
    await up?.kill('SIGINT', 60_000);
    killAll(processesNaming(dataDir).map((p) => p.pid));
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints how to use the cluster, with three Ready nodes in kubectl get nodes', async () => {
    const p = await start();
    expect(p.stdout).toContain(`kubectl --kubeconfig ${join(dataDir, 'kubeconfig')} get nodes`);
    await nodesReady();
  }, LONG + 60_000);

  it('runs the example Deployment: three pods answer on their pod IPs; scaled to 5 and back to 3', async () => {
    const applied = await kubectl('apply', '-f', HELLO);
    expect(applied.stdout).toContain('deployment.apps/hello created');
    const three = await helloPodsAnswer(3);
    expect(new Set(three.map((p) => p.ip)).size).toBe(3);
    expect((await kubectl('scale', 'deployment/hello', '--replicas=5')).stdout).toContain('deployment.apps/hello scaled');
    const five = await helloPodsAnswer(5);
    expect(five.map((p) => p.name)).toEqual(expect.arrayContaining(three.map((p) => p.name)));
    expect((await kubectl('scale', 'deployment/hello', '--replicas=3')).stdout).toContain('deployment.apps/hello scaled');
    await helloPodsAnswer(3);
  }, 2 * LONG);

  it('rolls the example out as the README does (kubectl set env, rollout status): at least 3 pods answer at every check, then the new ones say hi', async () => {
    const old = await helloPodsAnswer(3);
    const answer = async (ip: string): Promise<string | undefined> => (await answers([{ name: '', ip, ready: true, terminating: false }]))[0];
    const loop = answeringLoop(async () => ((await pods()) ?? []).map((p) => p.ip), answer);
    let answering: number[];
    try {
      expect((await kubectl('set', 'env', 'deployment/hello', 'GREETING=hi')).stdout).toContain('deployment.apps/hello env updated');
      const r = await kubectl('rollout', 'status', 'deployment/hello', '--timeout=150s');
      expect(r.stdout, r.stderr).toContain('deployment "hello" successfully rolled out');
    } finally {
      answering = await loop.stop();
    }
    console.log(`setpoint up rolling update: ${answering.length} checks, pods answering per check min ${Math.min(...answering)} max ${Math.max(...answering)}`);
    expect(answering.length).toBeGreaterThan(10);
    expect(Math.min(...answering), answering.join(',')).toBeGreaterThanOrEqual(3);
    const fresh = await helloPodsAnswer(3, 'hi');
    expect(fresh.some((p) => old.some((o) => o.name === p.name))).toBe(false);
  }, 2 * LONG);

  it('stops everything on SIGINT: no process left, the pods no longer answer', async () => {
    const before = (await pods()) ?? [];
    stopped = before.map((p) => p.name).sort();
    // What must go: the members, their components, the agents, and the pods' processes (their environment names their directory under the agents').
    const running = processesNaming(dataDir);
    const podProcesses = processesNaming(`SETPOINT_ROOT=${join(dataDir, 'agents')}`);
    console.log(`setpoint up: ${running.length} processes name the data dir before SIGINT, ${podProcesses.length} of them the pods'`);
    expect(podProcesses.length).toBeGreaterThanOrEqual(3);
    expect(running.length).toBeGreaterThan(podProcesses.length + 3 * 4);
    const exit = await (up as ManagedProcess).kill('SIGINT', 60_000);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(processesNaming(dataDir)).toEqual([]);
    expect(await answers(before)).toEqual(before.map(() => undefined));
  }, 90_000);

  it('starts again on the same data dir with the Deployment kept and its pods running again', async () => {
    await start();
    await nodesReady();
    const d = await kubectl('get', 'deployment', 'hello', '-o', 'jsonpath={.spec.replicas}');
    expect(d.stdout).toBe('3');
    const again = await helloPodsAnswer(3, 'hi');
    // The same pods, run again by their nodes' agents (as a kubelet does after a reboot), not new ones.
    expect(again.map((p) => p.name).sort()).toEqual(stopped);
  }, 2 * LONG);
});
