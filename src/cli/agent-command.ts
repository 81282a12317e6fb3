// `setpoint agent --kubeconfig FILE --node-name NAME`: a worker node running pods as local processes,
// with kubelet's flag names where kubelet has the flag. Bad flags are one line and exit 2; SIGTERM stops
// the agent and leaves its pods running for the next one to adopt.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import type { Logger } from 'pino';
import { parseDurationMs } from '../apiserver/duration.js';
import { prepareCertDir } from '../apiserver/pki/cert-dir.js';
import { Agent } from '../agent/agent.js';
import { KUBELET_BACKOFF, type BackoffSettings } from '../agent/backoff.js';
import { parseNodeLabels, parseTaints } from '../agent/node-object.js';
import { parsePodCidr } from '../agent/pod-cidr.js';
import { SimulatedNodes } from '../agent/simulated-nodes.js';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { RestClient } from '../client/rest-client.js';
import { makeLogger } from './logger.js';
import { stopOnSignals } from './stop-on-signals.js';

interface AgentFlags {
  kubeconfig?: string;
  nodeName?: string;
  rootDir?: string;
  nodeIp: string;
  address: string;
  port: string;
  nodeStatusUpdateFrequency: string;
  nodeLeaseDurationSeconds: string;
  maxPods: string;
  nodeLabels: string;
  registerWithTaints: string;
  podCidr?: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  clientCaFile?: string;
  crashLoopBackOffInitial: string;
  crashLoopBackOffMax: string;
  crashLoopBackOffReset: string;
  logLevel: string;
  hostMountPaths?: boolean;
  simulate?: string;
}

function usageError(message: string): never {
  console.error(`setpoint agent: ${message}`);
  process.exit(2);
}

function intFlag(name: string, v: string, min: number, max: number): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min || n > max) usageError(`invalid argument "${v}" for "--${name}" flag: must be an integer from ${min} to ${max}`);
  return n;
}

function durationFlag(name: string, v: string): number {
  try {
    const ms = parseDurationMs(v);
    if (ms <= 0) throw new Error('must be positive');
    return ms;
  } catch (e) {
    return usageError(`invalid argument "${v}" for "--${name}" flag: ${(e as Error).message}`);
  }
}

function parsed<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    return usageError((e as Error).message);
  }
}

/** Starts what the command runs (exit 1 with one line if it cannot), then stops it on SIGTERM/SIGINT. */
async function startOrExit(log: Logger, what: { start(): Promise<void>; stop(): Promise<void> }): Promise<void> {
  try {
    await what.start();
  } catch (e) {
    log.fatal({ err: e }, 'cannot start');
    console.error(`setpoint agent: ${(e as Error).message}`);
    process.exit(1);
  }
  stopOnSignals(log, () => what.stop());
}

export function backoffFrom(f: Pick<AgentFlags, 'crashLoopBackOffInitial' | 'crashLoopBackOffMax' | 'crashLoopBackOffReset'>): BackoffSettings {
  return {
    initialMs: durationFlag('crash-loop-back-off-initial', f.crashLoopBackOffInitial),
    maxMs: durationFlag('crash-loop-back-off-max', f.crashLoopBackOffMax),
    resetMs: durationFlag('crash-loop-back-off-reset', f.crashLoopBackOffReset),
  };
}

async function runAgent(f: AgentFlags): Promise<void> {
  const path = f.kubeconfig;
  if (path === undefined) usageError('--kubeconfig must be specified');
  const kc = parsed(() => loadKubeconfig({ path }));
  if (f.simulate !== undefined) return runSimulated(f, kc.config);
  const nodeName = (f.nodeName ?? hostname()).toLowerCase();
  if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(nodeName)) usageError(`invalid --node-name "${nodeName}": must be a DNS subdomain`);
  const port = intFlag('port', f.port, 0, 65535);
  const statusUpdateEveryMs = durationFlag('node-status-update-frequency', f.nodeStatusUpdateFrequency);
  const leaseDurationSeconds = intFlag('node-lease-duration-seconds', f.nodeLeaseDurationSeconds, 1, 3600);
  const maxPods = intFlag('max-pods', f.maxPods, 1, 65534);
  const labels = parsed(() => parseNodeLabels(f.nodeLabels));
  const taints = parsed(() => parseTaints(f.registerWithTaints));
  const addressRange = f.podCidr !== undefined ? parsed(() => parsePodCidr(f.podCidr ?? '')) : undefined;
  const backoff = backoffFrom(f);
  const rootDir = resolve(f.rootDir ?? join('.setpoint', 'agents', nodeName));
  const log = makeLogger(f.logLevel).child({ component: 'agent', node: nodeName });
  const rest = new RestClient({ ...kc.config, userAgent: `setpoint-agent/${nodeName}`, log });

  // The HTTPS port's certificate: given, or the agent's own (its own CA under <root-dir>/pki, as kubelet
  // makes a self-signed kubelet.crt). Callers are trusted by the cluster CA from the kubeconfig.
  let serving: { certPem: string; keyPem: string };
  try {
    if (f.tlsCertFile !== undefined || f.tlsPrivateKeyFile !== undefined) {
      if (f.tlsCertFile === undefined || f.tlsPrivateKeyFile === undefined) usageError('--tls-cert-file and --tls-private-key-file go together');
      serving = { certPem: readFileSync(f.tlsCertFile, 'utf8'), keyPem: readFileSync(f.tlsPrivateKeyFile, 'utf8') };
    } else {
      const dir = await prepareCertDir(join(rootDir, 'pki'), [f.nodeIp, f.address, 'localhost', nodeName].filter((s) => s !== '0.0.0.0'));
      if (!dir.serving) throw new Error('no serving certificate was made');
      serving = dir.serving;
    }
  } catch (e) {
    console.error(`setpoint agent: ${(e as Error).message}`);
    process.exit(1);
  }
  const ca = f.clientCaFile !== undefined ? readFileSync(f.clientCaFile, 'utf8') : kc.config.tls?.ca?.toString();
  if (ca === undefined) log.warn('no cluster CA (neither --client-ca-file nor one in the kubeconfig): the HTTPS port authorizes no one, so pod logs are not served');

  const agent = new Agent({
    rest,
    nodeName,
    rootDir,
    nodeIP: f.nodeIp,
    address: f.address,
    port,
    statusUpdateEveryMs,
    leaseDurationSeconds,
    maxPods,
    labels,
    taints,
    backoff,
    hostMountPaths: f.hostMountPaths === true,
    ...(addressRange ? { addressRange } : {}),
    serving,
    ...(ca !== undefined ? { clientCaPem: ca } : {}),
    log,
  });
  await startOrExit(log, agent);
}

async function runSimulated(f: AgentFlags, config: ReturnType<typeof loadKubeconfig>['config']): Promise<void> {
  const count = intFlag('simulate', f.simulate ?? '', 1, 100_000);
  const prefix = (f.nodeName ?? 'sim-node').toLowerCase();
  const log = makeLogger(f.logLevel).child({ component: 'simulated-nodes' });
  const sim = new SimulatedNodes({
    rest: new RestClient({ ...config, userAgent: 'setpoint-agent/simulated', log }),
    count,
    prefix,
    leaseDurationSeconds: intFlag('node-lease-duration-seconds', f.nodeLeaseDurationSeconds, 1, 3600),
    maxPods: intFlag('max-pods', f.maxPods, 1, 65534),
    labels: parsed(() => parseNodeLabels(f.nodeLabels)),
    taints: parsed(() => parseTaints(f.registerWithTaints)),
    log,
  });
  await startOrExit(log, sim);
}

export function registerAgentCommand(program: Command): void {
  const cmd = program
    .command('agent')
    .description('run a worker node agent: registers a Node and runs the pods bound to it as local processes')
    .option('--kubeconfig <file>', 'kubeconfig with the API server and the credentials to use (required)')
    .option('--node-name <name>', 'the Node to register (default: the host name)')
    .option('--root-dir <dir>', 'where pods, logs and state are kept (default: ./.setpoint/agents/<node-name>)')
    .option('--node-ip <ip>', "the node's InternalIP and the pods' hostIP", '127.0.0.1')
    .option('--address <ip>', 'the address the HTTPS port (pod logs) listens on', '127.0.0.1')
    .option('--port <port>', 'the HTTPS port (0: any free one, reported in the Node status)', '10250')
    .option('--node-status-update-frequency <duration>', 'how often the node status is posted at the latest', '10s')
    .option('--node-lease-duration-seconds <n>', "the node Lease's duration; it is renewed every quarter of it", '40')
    .option('--max-pods <n>', 'pods this node takes (capacity.pods)', '110')
    .option('--node-labels <k=v,...>', 'labels to register the node with', '')
    .option('--register-with-taints <k=v:Effect,...>', 'taints to register the node with', '')
    .option('--pod-cidr <cidr>', 'the block of 127.1.0.0/16 pod addresses come from (default: all of it)')
    .option('--tls-cert-file <file>', "the HTTPS port's certificate (default: one the agent makes under <root-dir>/pki)")
    .option('--tls-private-key-file <file>', "the HTTPS port's key")
    .option('--client-ca-file <file>', "the CA that signs callers' client certificates (default: the kubeconfig's CA)")
    .option('--crash-loop-back-off-initial <duration>', 'CrashLoopBackOff: the first delay', `${KUBELET_BACKOFF.initialMs / 1000}s`)
    .option('--crash-loop-back-off-max <duration>', 'CrashLoopBackOff: the cap', `${KUBELET_BACKOFF.maxMs / 1000}s`)
    .option('--crash-loop-back-off-reset <duration>', 'CrashLoopBackOff: running this long forgets the back-off', `${KUBELET_BACKOFF.resetMs / 1000}s`)
    .option('--host-mount-paths', "also link each volume at its real mountPath when that path does not exist and its parent is writable (off: volumes are found under the container's root, see docs/agent.md)")
    .option('--simulate <n>', 'run N simulated nodes (<node-name>-0 … -N-1, default name sim-node) instead: pods bound to them are Running and Ready at once, no processes')
    .addOption(new Option('--log-level <level>', 'log level').choices(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info'));
  cmd.exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));
  cmd.action((f: AgentFlags) => runAgent(f));
}
