// `setpoint why <kind>/<name> [-n ns]`: why an object is not converging, from what the system recorded —
// conditions, status, events down its owner chain, and the admission history of who changed or refused what
// (the API server's `history` subresource). Text for people, `-o json` for machines. Exit 0 either way: the answer is the output.
import type { Command } from 'commander';
import { WhyEngine } from '../../why/why-engine.js';
import { renderWhy } from '../../why/why-render.js';
import { ApiWhySource } from './api-why-source.js';
import { addClientFlags, runVerb, type ClientFlags } from './cli-context.js';
import { CliError } from './cli-error.js';
import { groupResource } from './discovery.js';
import { toJson } from './printers.js';

interface WhyFlags extends ClientFlags {
  output?: string;
}

export function registerWhyVerb(program: Command): void {
  addClientFlags(
    program
      .command('why')
      .description('explain why an object is not converging, from its conditions, events, owner chain and admission history')
      .argument('<object>', 'KIND/NAME, e.g. deployment/web, pod/web-0, node/n1')
      .option('-o, --output <format>', 'json for machines (default: text)'),
  ).action(async (arg: string, flags: WhyFlags) => {
    await runVerb(flags, async (ctx) => {
      if (flags.output !== undefined && flags.output !== 'json') throw new CliError('CLI_USAGE', `unable to match a printer suitable for the output format "${flags.output}", allowed formats are: json`);
      const i = arg.indexOf('/');
      if (i <= 0 || i === arg.length - 1) throw new CliError('CLI_USAGE', `arguments in resource/name form are required, e.g. deployment/web, not "${arg}"`);
      const r = (await ctx.resources()).forArg(arg.slice(0, i));
      const name = arg.slice(i + 1);
      const ns = r.namespaced ? ctx.namespace : '';
      // The object itself first, so a missing one is the server's own line (`pods "x" not found`).
      await ctx.client(r).get(ns, name);
      const engine = new WhyEngine(new ApiWhySource(ctx, r));
      const report = await engine.explain(r.kind, ns, name);
      if (!report) throw new CliError('CLI_INPUT', `${groupResource(r)} "${name}" not found`);
      process.stdout.write(flags.output === 'json' ? `${toJson(report)}\n` : renderWhy(report));
    });
  });
}
