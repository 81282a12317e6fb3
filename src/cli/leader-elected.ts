// How a leader-elected component (`setpoint scheduler`, `setpoint controller-manager`) runs its loops:
// with --leader-elect, an elector on the component's Lease, writes through a client that carries its
// fencing token, the loops run only while leading, and a lost lease ends the process with exit 1 as
// Kubernetes' components do (a fresh process campaigns again with empty state); without, the loops run at
// once with a plain client. A stop (the signal) ends the loops, then releases the Lease.
import { setMaxListeners } from 'node:events';
import { Option, type Command } from 'commander';
import type { Logger } from 'pino';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { LeaderElector } from '../client/leader-election.js';
import { RestClient } from '../client/rest-client.js';
import { addLeaderElectionFlags, FlagError, parseLeaderElectionFlags, type LeaderElectionFlags } from './leader-election-flags.js';
import { makeLogger } from './logger.js';
import { stopOnSignals } from './stop-on-signals.js';

export interface LeaderElected {
  readonly elector: LeaderElector | undefined;
  /** For every write the loops make: fenced when leader-elected. */
  readonly writeRest: RestClient;
  /** Runs `lead` while leading (or at once); resolves 'stopped' after the signal, 'lost' when leadership was lost. */
  run(signal: AbortSignal, lead: (leading: AbortSignal) => Promise<void>): Promise<'stopped' | 'lost'>;
}

export function leaderElected(rest: RestClient, flags: LeaderElectionFlags, log: Logger): LeaderElected {
  if (!flags.leaderElect) {
    return {
      elector: undefined,
      writeRest: rest,
      run: async (signal, lead) => {
        await lead(signal);
        return 'stopped';
      },
    };
  }
  let lead: (leading: AbortSignal) => Promise<void> = () => Promise.resolve();
  let lost = false;
  let stopSignal: AbortSignal | undefined;
  const elector: LeaderElector = new LeaderElector(rest, {
    ...flags.timing,
    lock: { namespace: flags.resourceNamespace, name: flags.resourceName },
    log,
    callbacks: {
      onStartedLeading: (leading) => lead(leading),
      onStoppedLeading: () => {
        if (stopSignal?.aborted !== true) lost = true;
      },
      onNewLeader: (identity) => log.info({ leader: identity, self: identity === elector.identity }, 'new leader elected'),
    },
  });
  return {
    elector,
    writeRest: elector.fencedClient(rest),
    async run(signal, l) {
      lead = l;
      stopSignal = signal;
      await elector.run(signal);
      return lost ? 'lost' : 'stopped';
    },
  };
}

/** Kubernetes' components exit 1 when they lose their lease; the log line is written first. */
export async function exitLeadershipLost(log: Logger, identity: string | undefined): Promise<never> {
  log.error({ identity }, 'leaderelection lost');
  // pino's destination is asynchronous: let it write the line before exiting.
  await new Promise<void>((resolve) => log.flush(() => resolve()));
  process.exit(1);
}

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** A bad flag: one line naming the command, exit 2. */
export function usageError(command: string, message: string): never {
  console.error(`setpoint ${command}: ${message}`);
  process.exit(2);
}

/** The options every leader-elected component shares (--kubeconfig, --context, --log-level, the --leader-elect* flags), its `own` between them. */
export function addComponentOptions(cmd: Command, lease: string, own: readonly Option[] = []): void {
  cmd
    .addOption(new Option('--kubeconfig <file>', 'kubeconfig file with the API server and credentials (default: $KUBECONFIG, then ~/.kube/config)'))
    .addOption(new Option('--context <name>', "the kubeconfig context to use (default: the file's current-context)"));
  for (const o of own) cmd.addOption(o);
  cmd.addOption(new Option('--log-level <level>', "log level: 'debug', 'info', 'warn', 'error', 'fatal' or 'silent' (default: info)"));
  addLeaderElectionFlags(cmd, lease);
  cmd.exitOverride((err) => {
    if (err.exitCode === 0) process.exit(0);
    process.exit(2);
  });
}

export interface ComponentFlags {
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly le: LeaderElectionFlags;
  readonly log: Logger;
}

/** Parses the shared options; a bad one is exit 2 with `setpoint <command>: …`. */
export function parseComponentOptions(command: string, opts: Readonly<Record<string, unknown>>, lease: string): ComponentFlags {
  const level = typeof opts.logLevel === 'string' ? opts.logLevel : 'info';
  if (!LOG_LEVELS.includes(level)) usageError(command, `invalid argument ${JSON.stringify(level)} for "--log-level" flag`);
  let le: LeaderElectionFlags;
  try {
    le = parseLeaderElectionFlags(opts, lease);
  } catch (e) {
    if (e instanceof FlagError) usageError(command, e.message);
    throw e;
  }
  return {
    le,
    log: makeLogger(level),
    ...(typeof opts.kubeconfig === 'string' ? { kubeconfig: opts.kubeconfig } : {}),
    ...(typeof opts.context === 'string' ? { context: opts.context } : {}),
  };
}

/** What a leader-elected component gives the runner: caches that fill while standing by, loops run while leading. */
export interface LeaderElectedLoops {
  startInformers(signal: AbortSignal): Promise<boolean>;
  run(leading: AbortSignal): Promise<void>;
  informersStopped(): Promise<void>;
}

export interface ComponentSpec {
  readonly command: string;
  readonly userAgent: string;
  /** Logged with the start line beside the server, lease and identity. */
  readonly startFields?: Readonly<Record<string, unknown>>;
  readonly startMessage: string;
  make(rest: RestClient, election: LeaderElected): LeaderElectedLoops;
}

/**
 * The life of a leader-elected component process: load the kubeconfig, fill the caches, campaign, run the
 * loops while leading; SIGTERM/SIGINT stops the loops, lets their writes finish and releases the Lease (exit
 * 0); a lost lease is exit 1.
 */
export async function runLeaderElectedComponent(flags: ComponentFlags, spec: ComponentSpec): Promise<void> {
  const { le, log } = flags;
  let loaded;
  try {
    loaded = loadKubeconfig({ ...(flags.kubeconfig !== undefined ? { path: flags.kubeconfig } : {}), ...(flags.context !== undefined ? { context: flags.context } : {}) });
  } catch (e) {
    usageError(spec.command, (e as Error).message);
  }
  const rest = new RestClient({ ...loaded.config, userAgent: spec.userAgent, log });
  const ac = new AbortController();
  setMaxListeners(0, ac.signal); // every informer and worker listens on it
  const election = leaderElected(rest, le, log);
  const loops = spec.make(rest, election);
  let done: Promise<unknown> = Promise.resolve();
  stopOnSignals(log, async () => {
    ac.abort();
    await done;
    await loops.informersStopped();
    rest.close();
  });
  const identity = election.elector?.identity;
  log.info({ server: loaded.config.server, ...(loaded.config.endpoints ? { endpoints: loaded.config.endpoints } : {}), ...spec.startFields, leaderElect: le.leaderElect, lease: `${le.resourceNamespace}/${le.resourceName}`, identity }, spec.startMessage);
  if (!(await loops.startInformers(ac.signal))) return;
  log.info('caches synced');
  const run = election.run(ac.signal, (leading) => loops.run(leading));
  done = run;
  if ((await run) === 'lost') await exitLeadershipLost(log, identity);
}
