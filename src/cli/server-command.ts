// `setpoint server`: one control-plane member — the store member, the API server on it, the scheduler and
// the controller manager — under one command and one data directory (control-plane-member.ts). It takes
// the store's flags (etcd's), the API server's serving flags and the loops' leader-election timing; three of
// them on three machines (or `setpoint up` on one) make a highly available control plane.
import { Option, type Command } from 'commander';
import { APISERVER_FLAGS, defaultForHelp } from '../apiserver/apiserver-flags.js';
import { LIFECYCLE_FLAGS } from '../controllers/lifecycle-flags.js';
import { ControlPlaneMember } from '../controlplane/control-plane-member.js';
import { lifecycleFlags } from './controller-manager-command.js';
import { FlagError, parseStoreFlags } from '../server/embed/store-flags.js';
import { makeLogger } from './logger.js';
import { addStoreFlags, storeFlagsGiven } from './store-command.js';
import { stopOnSignals } from './stop-on-signals.js';

/** The API server's flags a member forwards (the store it uses is its own; the log level is shared). */
const API_FLAGS = ['secure-port', 'bind-address', 'advertise-address', 'cert-dir', 'tls-cert-file', 'tls-private-key-file', 'client-ca-file', 'token-auth-file', 'event-ttl', 'etcd-compaction-interval'];
const LOOP_FLAGS = ['leader-elect-lease-duration', 'leader-elect-renew-deadline', 'leader-elect-retry-period'];
/** The controller manager's flags a member forwards as given (it checks them itself). */
const CONTROLLER_MANAGER_FLAGS = ['controllers', ...LIFECYCLE_FLAGS.map((f) => f.name)];

function camel(flag: string): string {
  return flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function forwarded(opts: Readonly<Record<string, unknown>>, flags: readonly string[]): string[] {
  const out: string[] = [];
  for (const f of flags) {
    const v = opts[camel(f)];
    if (v !== undefined) out.push(`--${f}=${String(v)}`);
  }
  return out;
}

export function registerServerCommand(program: Command): void {
  const cmd = program
    .command('server')
    .description("run one control-plane member: a store member, the API server, the scheduler and the controller manager, each its own process, restarted when one crashes (takes the store's flags)");
  addStoreFlags(cmd);
  for (const f of APISERVER_FLAGS.filter((x) => API_FLAGS.includes(x.name))) {
    const def = f.name === 'cert-dir' ? '<data-dir>/pki' : defaultForHelp(f);
    cmd.addOption(new Option(`--${f.name} <value>`, `the API server's: ${f.help}${def !== '' ? ` (default: ${def})` : ''}`));
  }
  cmd
    .addOption(new Option('--leader-elect-lease-duration <duration>', "the scheduler's and the controller manager's lease duration (default: theirs)"))
    .addOption(new Option('--leader-elect-renew-deadline <duration>', "the scheduler's and the controller manager's renew deadline (default: theirs)"))
    .addOption(new Option('--leader-elect-retry-period <duration>', "the scheduler's and the controller manager's retry period (default: theirs)"))
    .addOption(new Option('--controllers <list>', "the controller manager's --controllers (default: *)"));
  for (const f of LIFECYCLE_FLAGS) cmd.addOption(new Option(`--${f.name} <${f.kind}>`, `the controller manager's: ${f.help} (default: ${f.default})`));
  cmd
    .addOption(new Option('--api-server-endpoints <urls>', "every member's API server (https://host:port,…): the scheduler and the controller manager fail over between them, this member's own first"));
  cmd.action(async (opts: Record<string, string | boolean | undefined>) => {
    const storeRaw = storeFlagsGiven(opts);
    let store;
    try {
      store = parseStoreFlags(storeRaw);
    } catch (e) {
      if (e instanceof FlagError) {
        console.error(`setpoint server: ${e.message}`);
        process.exit(2);
      }
      throw e;
    }
    // Checked here as the controller manager checks them, so a bad value is exit 2, not a component that keeps exiting.
    lifecycleFlags(opts, 'server');
    const log = makeLogger(store.logLevel).child({ member: store.name });
    const securePort = Number(opts.securePort ?? 6443);
    if (!Number.isInteger(securePort) || securePort <= 0 || securePort > 65535) {
      console.error(`setpoint server: invalid argument ${JSON.stringify(String(opts.securePort))} for "--secure-port" flag: must be an integer from 1 to 65535`);
      process.exit(2);
    }
    // --data-dir is the member's directory: the store's data in store/, the API server's certificates in
    // pki/ (unless --cert-dir), the loops' kubeconfigs in kubeconfigs/.
    const storeArgs = Object.entries(storeRaw)
      .filter(([k]) => k !== 'data-dir')
      .map(([k, v]) => `--${k}=${v}`);
    const member = new ControlPlaneMember({
      dataDir: store.dataDir,
      storeArgs,
      etcdServers: store.advertiseClientUrls,
      apiServerArgs: [`--secure-port=${securePort}`, `--log-level=${store.logLevel}`, ...forwarded(opts, API_FLAGS.filter((f) => f !== 'secure-port'))],
      securePort,
      ...(typeof opts.apiServerEndpoints === 'string' ? { apiServerEndpoints: opts.apiServerEndpoints.split(',').filter((u) => u !== '') } : {}),
      ...(opts.certDir !== undefined ? { certDir: String(opts.certDir) } : {}),
      loopArgs: [`--log-level=${store.logLevel}`, ...forwarded(opts, LOOP_FLAGS)],
      schedulerArgs: [],
      controllerManagerArgs: forwarded(opts, CONTROLLER_MANAGER_FLAGS),
      log,
      onLine: (component, line) => process.stdout.write(`${component} ${line}\n`),
    });
    stopOnSignals(log, () => member.stop());
    try {
      await member.start();
      log.info({ securePort }, 'control-plane member running');
    } catch (e) {
      log.fatal({ err: e }, 'cannot start the control-plane member');
      await member.stop();
      process.exit(1);
    }
  });
}
