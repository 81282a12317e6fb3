// `setpoint why <kind>/<name> [-n ns]`: why an object is not converging, from what the system recorded —
// conditions, status, events down its owner chain, and (with --etcd-servers) the admission history of who
// changed or refused what. Text for people, `-o json` for machines. Exit 0 either way: the answer is the output.
import type { Command } from 'commander';
import { EtcdHistoryReader } from '../../why/etcd-history-reader.js';
import { WhyEngine } from '../../why/why-engine.js';
import { renderWhy } from '../../why/why-render.js';
import { ApiWhySource } from './api-why-source.js';
import { addClientFlags, runVerb, type ClientFlags } from './cli-context.js';
import { CliError } from './cli-error.js';
import { groupResource } from './discovery.js';
import { toJson } from './printers.js';

interface WhyFlags extends ClientFlags {
  output?: string;
  etcdServers?: string;
  etcdPrefix: string;
  etcdCafile?: string;
  etcdCertfile?: string;
  etcdKeyfile?: string;
}

export function registerWhyVerb(program: Command): void {
  addClientFlags(
    program
      .command('why')
      .description('explain why an object is not converging, from its conditions, events, owner chain and admission history')
      .argument('<object>', 'KIND/NAME, e.g. deployment/web, pod/web-0, node/n1')
      .option('-o, --output <format>', 'json for machines (default: text)')
      .option('--etcd-servers <urls>', "the store's client URLs, comma-separated, to read the admission history the API server keeps there")
      .option('--etcd-prefix <prefix>', "the API server's --etcd-prefix", '/registry')
      .option('--etcd-cafile <file>', "CA to verify the store's certificate")
      .option('--etcd-certfile <file>', 'client certificate for the store')
      .option('--etcd-keyfile <file>', 'client key for the store'),
  ).action(async (arg: string, flags: WhyFlags) => {
    await runVerb(flags, async (ctx) => {
      if (flags.output !== undefined && flags.output !== 'json') throw new CliError('CLI_USAGE', `unable to match a printer suitable for the output format "${flags.output}", allowed formats are: json`);
      const i = arg.indexOf('/');
      if (i <= 0 || i === arg.length - 1) throw new CliError('CLI_USAGE', `arguments in resource/name form are required, e.g. deployment/web, not "${arg}"`);
      const r = (await ctx.resources()).forArg(arg.slice(0, i));
      const name = arg.slice(i + 1);
      const servers = (flags.etcdServers ?? '').split(',').filter((s) => s !== '');
      const tls = {
        ...(flags.etcdCafile !== undefined ? { caFile: flags.etcdCafile } : {}),
        ...(flags.etcdCertfile !== undefined ? { certFile: flags.etcdCertfile } : {}),
        ...(flags.etcdKeyfile !== undefined ? { keyFile: flags.etcdKeyfile } : {}),
      };
      const reader = servers.length > 0 ? new EtcdHistoryReader({ endpoints: servers, prefix: flags.etcdPrefix, tls }) : undefined;
      const ns = r.namespaced ? ctx.namespace : '';
      // The object itself first, so a missing one is the server's own line (`pods "x" not found`).
      await ctx.client(r).get(ns, name);
      try {
        const engine = new WhyEngine(new ApiWhySource(ctx, reader, r));
        const report = await engine.explain(r.kind, ns, name);
        if (!report) throw new CliError('CLI_INPUT', `${groupResource(r)} "${name}" not found`);
        process.stdout.write(flags.output === 'json' ? `${toJson(report)}\n` : renderWhy(report));
      } finally {
        reader?.close();
      }
    });
  });
}
