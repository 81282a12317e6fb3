// `setpoint up` (what `npm start` runs): the whole HA control plane on this machine. Three `setpoint server`
// members (store on etcd's conventional local ports, API servers on 6443/16443/26443, one scheduler and one
// controller manager each, leader-elected) sharing one cluster CA, and one agent per member as nodes
// node-1 … node-3 running pods as real processes; `--simulate N` adds N simulated nodes. Every client it
// sets up (agents, loops, the admin kubeconfig) names all three API servers, its own member's first, and
// fails over between them (docs/endpoints.md). It writes ./.setpoint/kubeconfig (admin, one context per
// API server) without touching ~/.kube/config, prints how to use it, and stops everything on Ctrl-C. A
// second start keeps all state.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { stopAdoptedPods } from '../agent/stop-pods.js';
import { readCertDirCa } from '../apiserver/pki/cert-dir.js';
import { writeClientKubeconfig } from '../apiserver/pki/kubeconfig.js';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { readyz } from '../harness/kinds/apiserver.js';
import { ManagedProcess } from '../harness/managed-process.js';
import { setpointMain } from '../harness/setpoint-main.js';
import { waitFor } from '../harness/wait.js';

interface UpOptions {
  dataDir: string;
  host: string;
  simulate?: string;
  clientPorts: string;
  peerPorts: string;
  apiPorts: string;
  agentPorts: string;
}

interface Member {
  readonly name: string;
  readonly client: number;
  readonly peer: number;
  readonly api: number;
  readonly node: string;
  readonly agentPort: number;
}

const MEMBER_COUNT = 3;
/** Each port flag with its default: etcd's conventional local ports, 6443 and two more, the kubelet's 10250 and the next two. */
const PORT_FLAGS = {
  clientPorts: ['--client-ports', '2379,22379,32379'],
  peerPorts: ['--peer-ports', '2380,22380,32380'],
  apiPorts: ['--api-ports', '6443,16443,26443'],
  agentPorts: ['--agent-ports', '10250,10251,10252'],
} as const;

function usage(message: string): never {
  console.error(`setpoint up: ${message}`);
  process.exit(2);
}

/** Three ports, one per member, from a flag's comma-separated value (0 only for the agents: any free port). */
function ports(flag: keyof typeof PORT_FLAGS, text: string): number[] {
  const [name] = PORT_FLAGS[flag];
  const list = text.split(',').map((p) => p.trim());
  const min = flag === 'agentPorts' ? 0 : 1;
  if (list.length !== MEMBER_COUNT || list.some((p) => !/^\d+$/.test(p) || Number(p) < min || Number(p) > 65535)) {
    usage(`invalid argument ${JSON.stringify(text)} for "${name}" flag: must be ${MEMBER_COUNT} comma-separated ports from ${min} to 65535`);
  }
  return list.map(Number);
}

function members(o: UpOptions): Member[] {
  const [client, peer, api, agent] = [ports('clientPorts', o.clientPorts), ports('peerPorts', o.peerPorts), ports('apiPorts', o.apiPorts), ports('agentPorts', o.agentPorts)];
  return Array.from({ length: MEMBER_COUNT }, (_, i) => ({
    name: `m${i + 1}`,
    client: client[i] ?? 0,
    peer: peer[i] ?? 0,
    api: api[i] ?? 0,
    node: `node-${i + 1}`,
    agentPort: agent[i] ?? 0,
  }));
}

const COLORS = ['\x1b[36m', '\x1b[35m', '\x1b[33m', '\x1b[32m'];
const RESET = '\x1b[0m';

/** A kubeconfig written by an earlier start that already names every API server (older ones named one). */
function failsOver(file: string, apiServers: readonly string[]): boolean {
  if (!existsSync(file)) return false;
  try {
    const { config } = loadKubeconfig({ path: file });
    const named = new Set([config.server, ...(config.endpoints ?? [])]);
    return (config.endpoints?.length ?? 0) >= MEMBER_COUNT - 1 && apiServers.every((u) => named.has(u));
  } catch {
    return false;
  }
}

async function up(o: UpOptions): Promise<void> {
  const MEMBERS = members(o);
  const dataDir = resolve(o.dataDir);
  const pki = join(dataDir, 'pki');
  mkdirSync(pki, { recursive: true });
  const simulated = o.simulate !== undefined ? Number(o.simulate) : 0;
  if (!Number.isSafeInteger(simulated) || simulated < 0) {
    usage(`invalid argument ${JSON.stringify(o.simulate)} for "--simulate" flag: must be a whole number`);
  }
  const procs: ManagedProcess[] = [];
  let stopping = false;
  const run = (tag: string, args: readonly string[], color: string): ManagedProcess => {
    const p = new ManagedProcess(tag, { bin: process.execPath, args: [setpointMain(), ...args], env: { SETPOINT_LOG_FORMAT: 'json' } }, {
      logFile: join(dataDir, 'logs', `${tag}.log`),
      onLine: (line) => {
        // The full JSON logs go to .setpoint/logs; the terminal gets warnings and errors only.
        const m = /"level":(\d+)/.exec(line);
        if (m && Number(m[1]) < 40) return;
        console.log(`${color}${tag}${RESET} ${line.length > 400 ? `${line.slice(0, 400)}…` : line}`);
      },
    });
    p.onExit((exit) => {
      if (!stopping) console.log(`${color}${tag}${RESET} exited (${exit.signal ?? `code ${exit.code}`}); the rest carry on. Ctrl-C and npm start restart everything.`);
    });
    p.start();
    procs.push(p);
    return p;
  };

  const apiServers = MEMBERS.map((m) => `https://127.0.0.1:${m.api}`);
  const initialCluster = MEMBERS.map((m) => `${m.name}=http://${o.host}:${m.peer}`).join(',');
  MEMBERS.forEach((m, i) =>
    run(
      m.name,
      [
        'server',
        `--name=${m.name}`,
        `--data-dir=${join(dataDir, m.name)}`,
        `--listen-client-urls=http://${o.host}:${m.client}`,
        `--advertise-client-urls=http://${o.host}:${m.client}`,
        `--listen-peer-urls=http://${o.host}:${m.peer}`,
        `--initial-advertise-peer-urls=http://${o.host}:${m.peer}`,
        `--initial-cluster=${initialCluster}`,
        '--initial-cluster-token=setpoint-up',
        `--secure-port=${m.api}`,
        `--cert-dir=${pki}`,
        `--api-server-endpoints=${apiServers.join(',')}`,
      ],
      COLORS[i] ?? '',
    ),
  );
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    console.log('\nstopping: the agents and their pods first, then the members…');
    void (async () => {
      const agents = procs.slice(MEMBERS.length);
      await Promise.all(agents.map((p) => p.kill('SIGTERM', 15_000)));
      // An agent's SIGTERM leaves its pods for the next agent to adopt; `up` stops everything.
      for (const m of MEMBERS) await stopAdoptedPods(join(dataDir, 'agents', m.node)).catch((e: unknown) => console.log(`${m.node}: could not stop its pods: ${(e as Error).message}`));
      await Promise.all(procs.slice(0, MEMBERS.length).map((p) => p.kill('SIGTERM', 30_000)));
      process.exit(procs.some((p) => p.exitStatus?.signal === 'SIGKILL') ? 1 : 0);
    })();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);

  console.log(`setpoint up: three control-plane members and their nodes on this machine (state in ${dataDir}, logs in ${join(dataDir, 'logs')}) …`);
  const caFile = join(pki, 'ca.crt');
  const [first] = MEMBERS as [Member, ...Member[]];
  await waitFor('an API server to be ready', async () => existsSync(caFile) && (await readyz(first.api, readFileSync(caFile, 'utf8'))) === 200, { timeoutMs: 180_000, intervalMs: 250 });
  const ca = readCertDirCa(pki);
  const kubeconfig = join(dataDir, 'kubeconfig');
  // The admin kubeconfig: one context per API server (`setpoint`, `setpoint-2`, `setpoint-3`), each failing over to the others.
  if (!failsOver(kubeconfig, apiServers)) await writeClientKubeconfig(kubeconfig, ca, { server: apiServers, endpoints: apiServers, user: 'admin', groups: ['system:masters'] });

  for (const [i, m] of MEMBERS.entries()) {
    const root = join(dataDir, 'agents', m.node);
    mkdirSync(root, { recursive: true });
    const kc = join(root, 'kubeconfig');
    if (!failsOver(kc, apiServers)) {
      await writeClientKubeconfig(kc, ca, { server: `https://127.0.0.1:${m.api}`, endpoints: apiServers, user: `system:node:${m.node}`, groups: ['system:nodes'] });
    }
    run(m.node, ['agent', `--kubeconfig=${kc}`, `--node-name=${m.node}`, `--root-dir=${root}`, `--port=${m.agentPort}`, `--pod-cidr=127.1.${i + 1}.0/24`], COLORS[i] ?? '');
  }
  if (simulated > 0) run('simulated', ['agent', `--kubeconfig=${kubeconfig}`, `--simulate=${simulated}`, '--node-name=sim-node'], COLORS[3] ?? '');

  const kcArg = `--kubeconfig ${join(o.dataDir, 'kubeconfig')}`;
  console.log('');
  console.log('  The cluster is up. With kubectl (your ~/.kube/config is untouched):');
  console.log(`    kubectl ${kcArg} get nodes`);
  console.log(`    kubectl ${kcArg} apply -f examples/hello-deployment.yaml`);
  console.log(`    kubectl ${kcArg} get pods -o wide            # each pod has its own 127.1.x.y address: curl it`);
  console.log(`    kubectl ${kcArg} scale deployment hello --replicas=5`);
  console.log('  Or with setpoint itself, which also says why something is not converging:');
  console.log(`    node dist/src/cli/main.js get pods ${kcArg}`);
  console.log(`    node dist/src/cli/main.js why deployment/hello ${kcArg}`);
  console.log(`  The store speaks etcd v3: ETCDCTL_API=3 etcdctl --endpoints=${MEMBERS.map((m) => `${o.host}:${m.client}`).join(',')} endpoint status -w table`);
  console.log('  Other API servers: --context setpoint-2 / setpoint-3. Ctrl-C stops everything; npm start again keeps all state.');
  console.log('');
}

export function registerUpCommand(program: Command): void {
  program
    .command('up')
    .description('run the whole HA control plane on this machine: three members (stores on 2379/22379/32379, API servers on 6443/16443/26443 unless told other ports) and nodes node-1..3, state in ./.setpoint')
    .option('--data-dir <dir>', 'where the members, agents and the kubeconfig keep their state', '.setpoint')
    .option('--host <host>', 'address the stores listen on', '127.0.0.1')
    .option('--simulate <n>', 'also run N simulated nodes (pods bound to them are Running at once, no processes)')
    .option(`${PORT_FLAGS.clientPorts[0]} <ports>`, "the three stores' client ports", PORT_FLAGS.clientPorts[1])
    .option(`${PORT_FLAGS.peerPorts[0]} <ports>`, "the three stores' peer ports", PORT_FLAGS.peerPorts[1])
    .option(`${PORT_FLAGS.apiPorts[0]} <ports>`, "the three API servers' ports", PORT_FLAGS.apiPorts[1])
    .option(`${PORT_FLAGS.agentPorts[0]} <ports>`, "the three agents' ports (0: any free port)", PORT_FLAGS.agentPorts[1])
    .action(up);
}
