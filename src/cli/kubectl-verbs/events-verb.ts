// `setpoint events`: kubectl events' table (LAST SEEN, TYPE, REASON, OBJECT, MESSAGE; -A adds NAMESPACE),
// oldest first as kubectl sorts them; `--for kind/name` narrows to one object's events, `--types` to
// Normal or Warning.
import type { Command } from 'commander';
import { EVENTS } from '../../client/resource-types.js';
import { addClientFlags, out, runVerb, type ClientFlags } from './cli-context.js';
import { CliError } from './cli-error.js';
import { eventObjectRef, sortEvents, type EventObject } from '../../client/event-facts.js';
import { eventAge } from './event-age.js';
import { alignColumns } from './printers.js';

interface EventsFlags extends ClientFlags {
  allNamespaces?: boolean;
  for?: string;
  types?: string;
}

export function registerEventsVerb(program: Command): void {
  addClientFlags(
    program
      .command('events')
      .description('list events as kubectl events does, oldest first')
      .option('-A, --all-namespaces', 'events of every namespace (adds a NAMESPACE column)')
      .option('--for <kind/name>', "only this object's events, e.g. pod/web-0 or deployment/web")
      .option('--types <types>', 'only events of these types, comma-separated: Normal, Warning'),
  ).action(async (flags: EventsFlags) => {
    await runVerb(flags, async (ctx) => {
      const selectors: string[] = [];
      if (flags.for !== undefined) {
        const i = flags.for.indexOf('/');
        if (i <= 0 || i === flags.for.length - 1) throw new CliError('CLI_USAGE', `--for must be in resource/name form, not "${flags.for}"`);
        const d = await ctx.resources();
        const r = d.forArg(flags.for.slice(0, i));
        const name = flags.for.slice(i + 1);
        // kubectl checks the object exists, so a typo is an error rather than an empty table.
        await ctx.client(r).get(r.namespaced ? ctx.namespace : '', name);
        selectors.push(`involvedObject.kind=${r.kind}`, `involvedObject.name=${name}`);
      }
      const types = flags.types !== undefined ? new Set(flags.types.split(',').map((t) => t.trim().toLowerCase())) : undefined;
      const all = flags.allNamespaces === true;
      const list = await ctx.client(EVENTS).listAll(all ? '' : ctx.namespace, selectors.length > 0 ? { fieldSelector: selectors.join(',') } : {});
      const events = sortEvents(list.items as EventObject[]).filter((e) => types === undefined || types.has((e.type ?? '').toLowerCase()));
      if (events.length === 0) {
        process.stderr.write(all ? 'No events found.\n' : `No events found in ${ctx.namespace} namespace.\n`);
        return;
      }
      const now = Date.now();
      const rows = events.map((e) => [...(all ? [e.metadata?.namespace ?? ''] : []), eventAge(e, now), e.type ?? '', e.reason ?? '', eventObjectRef(e), (e.message ?? '').trim()]);
      const header = [...(all ? ['NAMESPACE'] : []), 'LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'];
      for (const line of alignColumns([header, ...rows])) out(line);
    });
  });
}
