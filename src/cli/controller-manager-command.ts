// `setpoint controller-manager --kubeconfig FILE`: the controllers alone (ReplicaSet, Deployment, and the
// others in src/controllers/all-controllers.ts) on any Setpoint API server, with kube-controller-manager's
// flag names: `--controllers` (`*`, `name`, `-name`), `--concurrent-replicaset-syncs`,
// `--concurrent-deployment-syncs`. A bad flag is one line and exit 2; SIGTERM/SIGINT stop the workers,
// let their writes finish, and exit 0.
import { Option, type Command } from 'commander';
import type { Logger } from 'pino';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { RestClient } from '../client/rest-client.js';
import { ALL_CONTROLLERS } from '../controllers/all-controllers.js';
import { ControllerManager, ControllerSelectionError, DEFAULT_CONCURRENT_SYNCS, selectControllers } from '../controllers/controller-manager.js';
import { makeLogger } from './logger.js';
import { stopOnSignals } from './stop-on-signals.js';

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

function usageError(message: string): never {
  console.error(`setpoint controller-manager: ${message}`);
  process.exit(2);
}

function positiveInt(flag: string, v: unknown): number {
  if (v === undefined) return DEFAULT_CONCURRENT_SYNCS;
  const s = String(v);
  if (!/^\d+$/.test(s) || Number(s) < 1 || Number(s) > 1000) usageError(`invalid argument ${JSON.stringify(s)} for "--${flag}" flag: must be an integer from 1 to 1000`);
  return Number(s);
}

interface ManagerFlags {
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly enabled: string[];
  readonly concurrency: Record<string, number>;
}

async function runManager(f: ManagerFlags, log: Logger): Promise<void> {
  let loaded;
  try {
    loaded = loadKubeconfig({ ...(f.kubeconfig !== undefined ? { path: f.kubeconfig } : {}), ...(f.context !== undefined ? { context: f.context } : {}) });
  } catch (e) {
    usageError((e as Error).message);
  }
  const rest = new RestClient({ ...loaded.config, userAgent: 'setpoint-controller-manager/v0.1.0' });
  const ac = new AbortController();
  const manager = new ControllerManager({ rest, controllers: ALL_CONTROLLERS, enabled: f.enabled, concurrency: f.concurrency, log });
  let done: Promise<void> = Promise.resolve();
  stopOnSignals(log, async () => {
    ac.abort();
    await done;
    await manager.informersStopped();
    rest.close();
  });
  log.info({ server: loaded.config.server, controllers: f.enabled }, 'starting the controller manager');
  if (!(await manager.startInformers(ac.signal))) return;
  log.info('caches synced');
  done = manager.runControllers(ac.signal);
  await done;
}

export function registerControllerManagerCommand(program: Command): void {
  const cmd = program
    .command('controller-manager')
    .description('run the controllers (ReplicaSet, Deployment, …) that drive the cluster toward what its objects ask for, through the API server')
    .addOption(new Option('--kubeconfig <file>', 'kubeconfig file with the API server and credentials (default: $KUBECONFIG, then ~/.kube/config)'))
    .addOption(new Option('--context <name>', "the kubeconfig context to use (default: the file's current-context)"))
    .addOption(
      new Option(
        '--controllers <list>',
        `controllers to run: '*' for all on by default, 'foo' to add foo, '-foo' to leave foo out (default: *; known: ${ALL_CONTROLLERS.map((c) => c.name).join(', ')})`,
      ),
    )
    .addOption(new Option('--concurrent-replicaset-syncs <n>', `ReplicaSets synced at once (default: ${DEFAULT_CONCURRENT_SYNCS})`))
    .addOption(new Option('--concurrent-deployment-syncs <n>', `Deployments synced at once (default: ${DEFAULT_CONCURRENT_SYNCS})`))
    .addOption(new Option('--log-level <level>', "log level: 'debug', 'info', 'warn', 'error', 'fatal' or 'silent' (default: info)"));
  cmd.exitOverride((err) => {
    if (err.exitCode === 0) process.exit(0);
    process.exit(2);
  });
  cmd.action(async (opts: Record<string, unknown>) => {
    const level = typeof opts.logLevel === 'string' ? opts.logLevel : 'info';
    if (!LOG_LEVELS.includes(level)) usageError(`invalid argument ${JSON.stringify(level)} for "--log-level" flag`);
    let enabled: string[];
    try {
      enabled = selectControllers(String(opts.controllers ?? '*').split(','), ALL_CONTROLLERS);
    } catch (e) {
      if (e instanceof ControllerSelectionError) usageError(`invalid argument for "--controllers" flag: ${e.message}`);
      throw e;
    }
    const concurrency = {
      replicaset: positiveInt('concurrent-replicaset-syncs', opts.concurrentReplicasetSyncs),
      deployment: positiveInt('concurrent-deployment-syncs', opts.concurrentDeploymentSyncs),
    };
    const flags: ManagerFlags = {
      enabled,
      concurrency,
      ...(typeof opts.kubeconfig === 'string' ? { kubeconfig: opts.kubeconfig } : {}),
      ...(typeof opts.context === 'string' ? { context: opts.context } : {}),
    };
    await runManager(flags, makeLogger(level));
  });
}
