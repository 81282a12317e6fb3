// `setpoint controller-manager --kubeconfig FILE`: the controllers alone (ReplicaSet, Deployment, and the
// others in src/controllers/all-controllers.ts) on any Setpoint API server, with kube-controller-manager's
// flag names: `--controllers` (`*`, `name`, `-name`), `--concurrent-replicaset-syncs`,
// `--concurrent-deployment-syncs`, and the `--leader-elect*` flags (Lease kube-system/kube-controller-manager
// by default). Caches fill while it stands by; once it leads every write carries its fencing token, so a
// paused or partitioned former leader cannot create a pod another has created since. As
// kube-controller-manager: a lost lease ends the process with exit 1; SIGTERM/SIGINT stop the workers, let
// their writes finish, release the lease and exit 0. A bad flag is one line and exit 2.
import { setMaxListeners } from 'node:events';
import { Option, type Command } from 'commander';
import type { Logger } from 'pino';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { RestClient } from '../client/rest-client.js';
import { DurationError, parseDurationMs } from '../apiserver/duration.js';
import { ALL_CONTROLLERS, allControllers } from '../controllers/all-controllers.js';
import { LIFECYCLE_FLAGS, lifecycleOptionsFrom, type LifecycleOptions } from '../controllers/lifecycle-flags.js';
import { ControllerManager, ControllerSelectionError, DEFAULT_CONCURRENT_SYNCS, selectControllers } from '../controllers/controller-manager.js';
import { exitLeadershipLost, leaderElected } from './leader-elected.js';
import { addLeaderElectionFlags, FlagError, parseLeaderElectionFlags, type LeaderElectionFlags } from './leader-election-flags.js';
import { makeLogger } from './logger.js';
import { stopOnSignals } from './stop-on-signals.js';

const COMPONENT = 'kube-controller-manager';
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
  readonly le: LeaderElectionFlags;
  readonly lifecycle: LifecycleOptions;
}

function camel(flag: string): string {
  return flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** The lifecycle controllers' flags (Go durations, ints, floats) into their options; a bad value is exit 2. */
function lifecycleFlags(opts: Record<string, unknown>): LifecycleOptions {
  const values = new Map<string, number>();
  for (const f of LIFECYCLE_FLAGS) {
    const raw = opts[camel(f.name)];
    if (raw === undefined) continue;
    const text = String(raw);
    let v: number;
    try {
      v = f.kind === 'duration' ? parseDurationMs(text) : Number(text);
    } catch (e) {
      if (e instanceof DurationError) usageError(`invalid argument ${JSON.stringify(text)} for "--${f.name}" flag: ${e.message}`);
      throw e;
    }
    if (!Number.isFinite(v) || (f.kind === 'int' && !Number.isInteger(v)) || (f.kind !== 'int' && v < 0)) usageError(`invalid argument ${JSON.stringify(text)} for "--${f.name}" flag: not a valid ${f.kind}`);
    values.set(f.name, v);
  }
  return lifecycleOptionsFrom((name) => values.get(name));
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
  setMaxListeners(0, ac.signal); // every informer and worker listens on it
  const election = leaderElected(rest, f.le, log);
  const identity = election.elector?.identity;
  const manager = new ControllerManager({
    rest,
    writeRest: election.writeRest,
    controllers: allControllers(f.lifecycle),
    enabled: f.enabled,
    concurrency: f.concurrency,
    log,
    ...(identity !== undefined ? { identity } : {}),
  });
  let done: Promise<unknown> = Promise.resolve();
  stopOnSignals(log, async () => {
    ac.abort();
    await done;
    await manager.informersStopped();
    rest.close();
  });
  log.info(
    { server: loaded.config.server, controllers: f.enabled, leaderElect: f.le.leaderElect, lease: `${f.le.resourceNamespace}/${f.le.resourceName}`, identity },
    'starting the controller manager',
  );
  if (!(await manager.startInformers(ac.signal))) return;
  log.info('caches synced');
  const run = election.run(ac.signal, (leading) => manager.runControllers(leading));
  done = run;
  if ((await run) === 'lost') await exitLeadershipLost(log, identity);
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
  for (const f of LIFECYCLE_FLAGS) cmd.addOption(new Option(`--${f.name} <${f.kind}>`, `${f.help} (default: ${f.default})`));
  addLeaderElectionFlags(cmd, COMPONENT);
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
    let le: LeaderElectionFlags;
    try {
      le = parseLeaderElectionFlags(opts, COMPONENT);
    } catch (e) {
      if (e instanceof FlagError) usageError(e.message);
      throw e;
    }
    const flags: ManagerFlags = {
      le,
      lifecycle: lifecycleFlags(opts),
      enabled,
      concurrency,
      ...(typeof opts.kubeconfig === 'string' ? { kubeconfig: opts.kubeconfig } : {}),
      ...(typeof opts.context === 'string' ? { context: opts.context } : {}),
    };
    await runManager(flags, makeLogger(level));
  });
}
