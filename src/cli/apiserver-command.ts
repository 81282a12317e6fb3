// `setpoint apiserver`: the Kubernetes-shaped API server on any etcd v3 store (Setpoint's or a real
// etcd cluster), with kube-apiserver's flag names and defaults. A bad flag is one line and exit 2;
// SIGTERM/SIGINT stop it cleanly (watches end, requests in flight finish).
import { Option, type Command } from 'commander';
import { APISERVER_FLAGS, ApiServerFlagError, defaultForHelp, parseApiServerFlags } from '../apiserver/apiserver-flags.js';
import { startFromFlags } from '../apiserver/start-from-flags.js';
import { makeLogger } from './logger.js';
import { stopOnSignals } from './stop-on-signals.js';

function camel(flag: string): string {
  return flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function usageError(message: string): never {
  console.error(`setpoint apiserver: ${message}`);
  process.exit(2);
}

export function registerApiServerCommand(program: Command): void {
  const cmd = program
    .command('apiserver')
    .description("run the API server (Kubernetes' REST API) on an etcd v3 store, with kube-apiserver's flags")
    .addHelpText('after', '\nEvery authenticated user may do everything (there is no authorization yet).');
  for (const f of APISERVER_FLAGS) {
    const def = defaultForHelp(f);
    const help = `${f.help}${f.required ? ' (required)' : ''}${def !== '' ? ` (default: ${def})` : ''}`;
    cmd.addOption(f.kind === 'bool' ? new Option(`--${f.name} [bool]`, help) : new Option(`--${f.name} <value>`, help));
  }
  cmd.exitOverride((err) => {
    if (err.exitCode === 0) process.exit(0);
    // Commander has printed its own line (unknown option, missing value).
    process.exit(2);
  });
  cmd.action(async (opts: Record<string, string | boolean | undefined>) => {
    const raw: Record<string, string> = {};
    for (const f of APISERVER_FLAGS) {
      const v = opts[camel(f.name)];
      if (v !== undefined) raw[f.name] = v === true ? 'true' : String(v);
    }
    let flags;
    try {
      flags = parseApiServerFlags(raw);
    } catch (e) {
      if (e instanceof ApiServerFlagError) usageError(e.message);
      throw e;
    }
    const log = makeLogger(flags.logLevel);
    let server;
    try {
      server = await startFromFlags(flags, { log });
    } catch (e) {
      log.fatal({ err: e }, 'cannot start');
      console.error(`setpoint apiserver: ${(e as Error).message}`);
      process.exit(1);
    }
    stopOnSignals(log, () => server.stop());
  });
}
