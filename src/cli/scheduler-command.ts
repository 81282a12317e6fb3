// `setpoint scheduler --kubeconfig FILE`: the scheduler alone, on any Setpoint API server, leader-elected
// on the Lease kube-system/kube-scheduler by default. Its caches fill while it stands by; once it leads,
// every write (bindings, pod status, events, preemptions) carries its fencing token. As kube-scheduler:
// losing the lease ends the process with exit 1 (a fresh process campaigns again); SIGTERM/SIGINT stops the
// loop, lets its writes finish, releases the lease and exits 0.
import { setMaxListeners } from 'node:events';
import { Option, type Command } from 'commander';
import type { Logger } from 'pino';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { RestClient } from '../client/rest-client.js';
import { SchedulerRunner } from '../scheduler/scheduler-runner.js';
import { exitLeadershipLost, leaderElected } from './leader-elected.js';
import { addLeaderElectionFlags, FlagError, parseLeaderElectionFlags, type LeaderElectionFlags } from './leader-election-flags.js';
import { makeLogger } from './logger.js';
import { stopOnSignals } from './stop-on-signals.js';

const COMPONENT = 'kube-scheduler';

function usageError(message: string): never {
  console.error(`setpoint scheduler: ${message}`);
  process.exit(2);
}

async function runScheduler(kubeconfig: string | undefined, context: string | undefined, le: LeaderElectionFlags, log: Logger): Promise<void> {
  let loaded;
  try {
    loaded = loadKubeconfig({ ...(kubeconfig !== undefined ? { path: kubeconfig } : {}), ...(context !== undefined ? { context } : {}) });
  } catch (e) {
    usageError((e as Error).message);
  }
  const rest = new RestClient({ ...loaded.config, userAgent: 'setpoint-scheduler/v0.1.0' });
  const ac = new AbortController();
  setMaxListeners(0, ac.signal); // every informer and worker listens on it
  const election = leaderElected(rest, le, log);
  const runner = new SchedulerRunner({ rest, writeRest: election.writeRest, log });
  let done: Promise<unknown> = Promise.resolve();
  stopOnSignals(log, async () => {
    ac.abort();
    await done;
    await runner.informersStopped();
    rest.close();
  });
  const identity = election.elector?.identity;
  log.info({ server: loaded.config.server, leaderElect: le.leaderElect, lease: `${le.resourceNamespace}/${le.resourceName}`, identity }, 'starting the scheduler');
  if (!(await runner.startInformers(ac.signal))) return;
  log.info('caches synced');
  const run = election.run(ac.signal, (leading) => runner.run(leading));
  done = run;
  if ((await run) === 'lost') await exitLeadershipLost(log, identity);
}

export function registerSchedulerCommand(program: Command): void {
  const cmd = program
    .command('scheduler')
    .description('run the scheduler: place pending pods on nodes through the API server, leader-elected so several can run for high availability')
    .addOption(new Option('--kubeconfig <file>', 'kubeconfig file with the API server and credentials (default: $KUBECONFIG, then ~/.kube/config)'))
    .addOption(new Option('--context <name>', "the kubeconfig context to use (default: the file's current-context)"))
    .addOption(new Option('--log-level <level>', "log level: 'debug', 'info', 'warn', 'error', 'fatal' or 'silent' (default: info)"));
  addLeaderElectionFlags(cmd, COMPONENT);
  cmd.exitOverride((err) => {
    if (err.exitCode === 0) process.exit(0);
    process.exit(2);
  });
  cmd.action(async (opts: Record<string, unknown>) => {
    let le: LeaderElectionFlags;
    try {
      le = parseLeaderElectionFlags(opts, COMPONENT);
    } catch (e) {
      if (e instanceof FlagError) usageError(e.message);
      throw e;
    }
    const level = typeof opts.logLevel === 'string' ? opts.logLevel : 'info';
    if (!['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'].includes(level)) usageError(`invalid argument ${JSON.stringify(level)} for "--log-level" flag`);
    const log = makeLogger(level);
    await runScheduler(typeof opts.kubeconfig === 'string' ? opts.kubeconfig : undefined, typeof opts.context === 'string' ? opts.context : undefined, le, log);
  });
}
