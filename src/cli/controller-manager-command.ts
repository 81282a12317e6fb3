// `setpoint controller-manager --kubeconfig FILE`: the controllers alone (ReplicaSet, Deployment, and the
// others in src/controllers/all-controllers.ts) on any Setpoint API server, with kube-controller-manager's
// flag names: `--controllers` (`*`, `name`, `-name`), `--concurrent-replicaset-syncs`,
// `--concurrent-deployment-syncs`, and the `--leader-elect*` flags (Lease kube-system/kube-controller-manager
// by default). Caches fill while it stands by; once it leads every write carries its fencing token, so a
// paused or partitioned former leader cannot create a pod another has created since. As
// kube-controller-manager: a lost lease ends the process with exit 1; SIGTERM/SIGINT stop the workers, let
// their writes finish, release the lease and exit 0. A bad flag is one line and exit 2.
import { Option, type Command } from 'commander';
import { DurationError, parseDurationMs } from '../apiserver/duration.js';
import { ALL_CONTROLLERS, allControllers } from '../controllers/all-controllers.js';
import { LIFECYCLE_FLAGS, lifecycleOptionsFrom, type LifecycleOptions } from '../controllers/lifecycle-flags.js';
import { ControllerManager, ControllerSelectionError, DEFAULT_CONCURRENT_SYNCS, selectControllers } from '../controllers/controller-manager.js';
import { addComponentOptions, parseComponentOptions, runLeaderElectedComponent, usageError as commandUsageError } from './leader-elected.js';

const COMPONENT = 'kube-controller-manager';
const COMMAND = 'controller-manager';

function usageError(message: string): never {
  commandUsageError(COMMAND, message);
}

function positiveInt(flag: string, v: unknown): number {
  if (v === undefined) return DEFAULT_CONCURRENT_SYNCS;
  const s = String(v);
  if (!/^\d+$/.test(s) || Number(s) < 1 || Number(s) > 1000) usageError(`invalid argument ${JSON.stringify(s)} for "--${flag}" flag: must be an integer from 1 to 1000`);
  return Number(s);
}

function camel(flag: string): string {
  return flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** The lifecycle controllers' flags (Go durations, ints, floats) into their options; a bad value is exit 2 (as `setpoint <command>`). */
export function lifecycleFlags(opts: Record<string, unknown>, command = COMMAND): LifecycleOptions {
  const usageError = (message: string): never => commandUsageError(command, message);
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

export function registerControllerManagerCommand(program: Command): void {
  const cmd = program
    .command(COMMAND)
    .description('run the controllers (ReplicaSet, Deployment, …) that drive the cluster toward what its objects ask for, through the API server');
  addComponentOptions(cmd, COMPONENT, [
    new Option(
      '--controllers <list>',
      `controllers to run: '*' for all on by default, 'foo' to add foo, '-foo' to leave foo out (default: *; known: ${ALL_CONTROLLERS.map((c) => c.name).join(', ')})`,
    ),
    new Option('--concurrent-replicaset-syncs <n>', `ReplicaSets synced at once (default: ${DEFAULT_CONCURRENT_SYNCS})`),
    new Option('--concurrent-deployment-syncs <n>', `Deployments synced at once (default: ${DEFAULT_CONCURRENT_SYNCS})`),
    ...LIFECYCLE_FLAGS.map((f) => new Option(`--${f.name} <${f.kind}>`, `${f.help} (default: ${f.default})`)),
  ]);
  cmd.action(async (opts: Record<string, unknown>) => {
    const flags = parseComponentOptions(COMMAND, opts, COMPONENT);
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
    const lifecycle = lifecycleFlags(opts);
    await runLeaderElectedComponent(flags, {
      command: COMMAND,
      userAgent: 'setpoint-controller-manager/v0.1.0',
      startMessage: 'starting the controller manager',
      startFields: { controllers: enabled },
      make: (rest, election) => {
        const identity = election.elector?.identity;
        const manager = new ControllerManager({
          rest,
          writeRest: election.writeRest,
          controllers: allControllers(lifecycle),
          enabled,
          concurrency,
          log: flags.log,
          ...(identity !== undefined ? { identity } : {}),
        });
        return { startInformers: (s) => manager.startInformers(s), run: (leading) => manager.runControllers(leading), informersStopped: () => manager.informersStopped() };
      },
    });
  });
}
