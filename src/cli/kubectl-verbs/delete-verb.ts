// `setpoint delete`: by names, `TYPE/NAME`, `-l` (listed, then deleted one by one as kubectl does) or `-f`
// manifests; `--grace-period`, `--cascade`; `--wait` (kubectl's default: on) waits until each object is gone
// (a finalizer or a pod's grace period keeps it). Prints `deployment.apps "web" deleted`.
import type { Command } from 'commander';
import { setTimeout as delay } from 'node:timers/promises';
import { isNotFound } from '../../client/api-status-error.js';
import type { DeleteOptions } from '../../client/resource-client.js';
import { addClientFlags, out, runVerb, type CliContext, type ClientFlags } from './cli-context.js';
import { CliError, errorLine } from './cli-error.js';
import { qualifiedName, type ApiResource } from './discovery.js';
import { readManifests } from './manifests.js';
import { targetOf } from './object-target.js';
import { resolveArgs } from './resource-args.js';

interface DeleteFlags extends ClientFlags {
  filename: string[];
  recursive?: boolean;
  selector?: string;
  all?: boolean;
  allNamespaces?: boolean;
  gracePeriod?: string;
  cascade?: string;
  wait: boolean;
  timeout?: string;
}

interface Doomed {
  readonly resource: ApiResource;
  readonly namespace: string;
  readonly name: string;
}

const collect = (v: string, prev: string[]): string[] => [...prev, v];

export function registerDeleteVerb(program: Command): void {
  addClientFlags(
    program
      .command('delete')
      .description('delete objects by name, by label selector, or as named in manifests, and wait until they are gone')
      .argument('[resources...]', 'TYPE [NAME...] or TYPE/NAME ...')
      .option('-f, --filename <path>', 'delete what these manifests name: a file, a folder, or - (repeatable)', collect, [])
      .option('-R, --recursive', 'also read the folders under a folder given with -f')
      .option('-l, --selector <query>', 'delete the objects of the type that match this label selector')
      .option('--all', 'delete every object of the type in the namespace')
      .option('-A, --all-namespaces', 'with -l or --all: in every namespace')
      .option('--grace-period <seconds>', 'seconds the object is given to terminate (pods); -1 keeps the default, 0 at once')
      .option('--cascade <policy>', 'background, foreground or orphan (default: background)')
      .option('--wait', 'wait until the objects are gone (default)', true)
      .option('--no-wait', 'return as soon as the deletions are accepted')
      .option('--timeout <duration>', 'give up waiting after this long, e.g. 30s or 2m (default: no limit)'),
  ).action(async (args: string[], flags: DeleteFlags) => {
    await runVerb(flags, async (ctx) => {
      const doomed = await targets(ctx, args, flags);
      const opts = deleteOptions(flags);
      const accepted: Doomed[] = [];
      for (const t of doomed) {
        try {
          await ctx.client(t.resource).delete(t.namespace, t.name, opts);
          out(`${qualifiedName(t.resource, t.name).replace(/\/([^/]*)$/, ' "$1"')} deleted`);
          accepted.push(t);
        } catch (e) {
          process.stderr.write(`${errorLine(e)}\n`);
          process.exitCode = 1;
        }
      }
      if (flags.wait) await waitGone(ctx, accepted, parseDuration(flags.timeout));
    });
  });
}

async function targets(ctx: CliContext, args: readonly string[], flags: DeleteFlags): Promise<Doomed[]> {
  const d = await ctx.resources();
  if (flags.filename.length > 0) {
    if (args.length > 0) throw new CliError('CLI_USAGE', 'resource(s) were provided, but no name was specified with -f');
    return readManifests(flags.filename, flags.recursive === true).map((m) => targetOf(ctx, d, m.object, m.source));
  }
  const out: Doomed[] = [];
  for (const r of resolveArgs(d, args, 'delete')) {
    const ns = r.resource.namespaced ? ctx.namespace : '';
    if (r.names.length > 0) {
      if (flags.selector !== undefined || flags.all === true) throw new CliError('CLI_USAGE', 'name cannot be provided when a selector is specified');
      for (const name of r.names) out.push({ resource: r.resource, namespace: ns, name });
      continue;
    }
    if (flags.selector === undefined && flags.all !== true) throw new CliError('CLI_USAGE', 'resource(s) were provided, but no name was specified');
    const listNs = flags.allNamespaces === true ? '' : ns;
    const list = await ctx.client(r.resource).listAll(listNs, flags.selector !== undefined ? { labelSelector: flags.selector } : {});
    for (const o of list.items) out.push({ resource: r.resource, namespace: o.metadata?.namespace ?? '', name: o.metadata?.name ?? '' });
  }
  if (out.length === 0) process.stderr.write('No resources found\n');
  return out;
}

function deleteOptions(flags: DeleteFlags): DeleteOptions {
  const o: { gracePeriodSeconds?: number; propagationPolicy?: 'Background' | 'Foreground' | 'Orphan' } = {};
  if (flags.gracePeriod !== undefined) {
    const g = Number(flags.gracePeriod);
    if (!Number.isInteger(g)) throw new CliError('CLI_USAGE', `invalid argument "${flags.gracePeriod}" for "--grace-period" flag: not an integer`);
    // kubectl: negative keeps the object's own default; 0 means immediately (1 s for pods, unless forced).
    if (g >= 0) o.gracePeriodSeconds = g;
  }
  if (flags.cascade !== undefined) {
    const c = flags.cascade.toLowerCase();
    if (c === 'background' || c === 'true') o.propagationPolicy = 'Background';
    else if (c === 'foreground') o.propagationPolicy = 'Foreground';
    else if (c === 'orphan' || c === 'false') o.propagationPolicy = 'Orphan';
    else throw new CliError('CLI_USAGE', `invalid cascade value (${flags.cascade}). Must be "background", "foreground", or "orphan"`);
  }
  return o;
}

export function parseDuration(s: string | undefined): number | undefined {
  if (s === undefined || s === '' || s === '0' || s === '0s') return undefined;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(s);
  if (!m) throw new CliError('CLI_USAGE', `invalid argument "${s}" for "--timeout" flag: time: invalid duration "${s}"`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
  return Number(m[1]) * unit;
}

/** Polls each object until a GET says NotFound (kubectl watches; a poll is simpler and as correct here). */
async function waitGone(ctx: CliContext, items: readonly Doomed[], timeoutMs: number | undefined): Promise<void> {
  const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
  for (const t of items) {
    let pause = 50;
    for (;;) {
      try {
        await ctx.client(t.resource).get(t.namespace, t.name);
      } catch (e) {
        if (isNotFound(e)) break;
        throw e;
      }
      if (Date.now() > deadline) throw new CliError('CLI_WAIT', `timed out waiting for the condition on ${qualifiedName(t.resource, t.name).split('/')[0] ?? ''}/${t.name}`);
      await delay(pause);
      pause = Math.min(1000, pause * 2);
    }
  }
}
