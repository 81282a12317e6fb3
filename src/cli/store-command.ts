// `setpoint store`: one member of the etcd-compatible store, with etcd's flags (see server/store-flags.ts).
// SIGTERM/SIGINT stop it cleanly: a leader hands leadership over first, so a rolling restart loses no write.
import type { Command } from 'commander';
import { Option } from 'commander';
import { STORE_FLAG_DEFAULTS, FlagError, flagsFromEnv, parseStoreFlags } from '../server/embed/store-flags.js';
import { startMember } from '../server/embed/start-member.js';
import { makeLogger } from './logger.js';
import { STORE_FLAG_HELP } from './store-flag-help.js';
import { stopOnSignals } from './stop-on-signals.js';

const BOOLEAN_FLAGS = new Set(['client-cert-auth', 'peer-client-cert-auth', 'strict-reconfig-check']);

function camel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** etcd's flags, as `setpoint store` and `setpoint server` take them. */
export function addStoreFlags(cmd: Command): void {
  for (const flag of Object.keys(STORE_FLAG_DEFAULTS)) {
    // Booleans take an optional value, as etcd's do: --client-cert-auth or --client-cert-auth=true.
    const def = STORE_FLAG_DEFAULTS[flag] ?? '';
    const help = `${STORE_FLAG_HELP[flag] ?? ''}${def !== '' ? ` (default: ${def})` : ''}`;
    const o = BOOLEAN_FLAGS.has(flag) ? new Option(`--${flag} [bool]`, help) : new Option(`--${flag} <value>`, help);
    cmd.addOption(o);
  }
}

/** The store flags given on the command line, by etcd's names. */
export function storeFlagsGiven(opts: Readonly<Record<string, string | boolean | undefined>>): Record<string, string> {
  const raw: Record<string, string> = {};
  for (const flag of Object.keys(STORE_FLAG_DEFAULTS)) {
    const v = opts[camel(flag)];
    if (v !== undefined) raw[flag] = v === true ? 'true' : String(v);
  }
  return raw;
}

export function registerStoreCommand(program: Command): void {
  const cmd = program
    .command('store')
    .description("run one member of the etcd-compatible store (takes etcd's flags)")
    .addHelpText('after', "\nEvery flag can also be set from the environment as etcd reads it: ETCD_<FLAG> in upper case with '_' for '-'\n(ETCD_INITIAL_CLUSTER=...). A flag on the command line wins over the environment.");
  addStoreFlags(cmd);
  cmd.action(async (opts: Record<string, string | boolean | undefined>) => {
    const raw = { ...flagsFromEnv(process.env), ...storeFlagsGiven(opts) };
    let flags;
    try {
      flags = parseStoreFlags(raw);
    } catch (e) {
      if (e instanceof FlagError) {
        console.error(`setpoint store: ${e.message}`);
        process.exit(2);
      }
      throw e;
    }
    const log = makeLogger(flags.logLevel);
    let running;
    try {
      running = await startMember(flags, log);
    } catch (e) {
      log.fatal({ err: e }, 'cannot start');
      console.error(`setpoint store: ${(e as Error).message}`);
      process.exit(1);
    }
    const signals = stopOnSignals(log, () => running.stop());
    // Removed from the cluster: the member has stopped itself; exit as etcd does.
    void running.done.then(() => {
      if (signals.stopping || !running.member.removedFromCluster) return;
      log.warn('removed from the cluster: exiting');
      process.exit(0);
    });
  });
}
