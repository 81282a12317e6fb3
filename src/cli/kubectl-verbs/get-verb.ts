// `setpoint get`: the server's Tables printed as kubectl prints them (NAME first, -A adds NAMESPACE, -o wide
// the priority columns), or objects as json/yaml/name; -l, --field-selector, -w (the table, then one row per
// change). "No resources found in default namespace." on stderr as kubectl writes it.
import type { Command } from 'commander';
import type { KubeObject } from '../../client/kube-object.js';
import { apiVersionOf, type ResourceClient } from '../../client/resource-client.js';
import { addClientFlags, out, runVerb, type CliContext, type ClientFlags } from './cli-context.js';
import { CliError, errorLine } from './cli-error.js';
import { qualifiedName } from './discovery.js';
import { alignColumns, asList, parseOutput, tableHeader, tableRows, toJson, toYaml, type OutputFormat, type TableDoc, type TableLayout } from './printers.js';
import { resolveArgs, type ResourceRequest } from './resource-args.js';

export const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

interface GetFlags extends ClientFlags {
  output?: string;
  selector?: string;
  fieldSelector?: string;
  allNamespaces?: boolean;
  watch?: boolean;
  noHeaders?: boolean;
}

export function registerGetVerb(program: Command): void {
  addClientFlags(
    program
      .command('get')
      .description('print objects: the server\'s table (kubectl\'s columns), or -o wide|yaml|json|name')
      .argument('[resources...]', 'TYPE[,TYPE] [NAME...] or TYPE/NAME ...')
      .option('-o, --output <format>', 'wide, yaml, json or name (default: the table)')
      .option('-l, --selector <query>', 'label selector (=, ==, !=, in, notin, exists, !exists)')
      .option('--field-selector <query>', 'field selector (metadata.name, metadata.namespace, spec.nodeName, status.phase, involvedObject.*)')
      .option('-A, --all-namespaces', 'every namespace (adds a NAMESPACE column)')
      .option('-w, --watch', 'after the list, print each change as it happens (Ctrl-C ends)')
      .option('--no-headers', 'print the table without its header line'),
  ).action(async (args: string[], flags: GetFlags) => {
    await runVerb(flags, async (ctx) => {
      const format = parseOutput(flags.output);
      const reqs = resolveArgs(await ctx.resources(), args, 'get');
      if (flags.watch === true && reqs.length !== 1) throw new CliError('CLI_USAGE', 'you may only specify a single resource type');
      const g = new Getter(ctx, flags, format, reqs.length > 1);
      for (const r of reqs) await g.print(r);
      g.finish(reqs);
      if (flags.watch === true && reqs[0]) await g.watch(reqs[0]);
    });
  });
}

class Getter {
  private readonly objects: KubeObject[] = [];
  private printedTables = 0;
  private failed = false;
  private rv = '';
  /** Column widths so far, so `-w` rows line up under the first table (kubectl's RememberWidths). */
  private readonly widths: number[] = [];

  constructor(
    private readonly ctx: CliContext,
    private readonly flags: GetFlags,
    private readonly format: OutputFormat,
    private readonly several: boolean,
  ) {}

  private ns(r: ResourceRequest): string {
    return r.resource.namespaced && this.flags.allNamespaces !== true ? this.ctx.namespace : '';
  }

  private layout(r: ResourceRequest): TableLayout {
    return {
      wide: this.format === 'wide',
      withNamespace: this.flags.allNamespaces === true && r.resource.namespaced,
      ...(this.several ? { namePrefix: qualifiedName(r.resource, '').slice(0, -1) } : {}),
    };
  }

  private query(): Record<string, string | undefined> {
    return { labelSelector: this.flags.selector, fieldSelector: this.flags.fieldSelector };
  }

  async print(r: ResourceRequest): Promise<void> {
    const client = this.ctx.client(r.resource);
    if (this.format === 'table' || this.format === 'wide') {
      const tables: TableDoc[] = [];
      if (r.names.length === 0) tables.push(await this.tableOf(client, this.ns(r)));
      for (const name of r.names) {
        try {
          tables.push(await this.ctx.rest.request<TableDoc>({ path: client.path(this.ns(r), name), accept: TABLE_ACCEPT }));
        } catch (e) {
          this.fail(e);
        }
      }
      const l = this.layout(r);
      const rows = tables.flatMap((t) => tableRows(t, l));
      if (rows.length === 0) return;
      if (this.printedTables++ > 0) out('');
      // Each kind's table is laid out on its own, as kubectl starts a new one per kind.
      this.widths.length = 0;
      const header = tables[0] ? tableHeader(tables[0], l) : [];
      for (const line of alignColumns(this.flags.noHeaders === true ? rows : [header, ...rows], this.widths)) out(line);
      return;
    }
    if (r.names.length === 0) {
      const list = await client.list(this.ns(r), this.query());
      this.rv = list.metadata.resourceVersion ?? '';
      for (const o of list.items) this.objects.push({ apiVersion: o.apiVersion ?? apiVersionOf(r.resource), kind: o.kind ?? r.resource.kind, ...o });
    }
    for (const name of r.names) {
      try {
        this.objects.push(await client.get(this.ns(r), name));
      } catch (e) {
        this.fail(e);
      }
    }
    if (this.format === 'name') for (const o of this.objects.splice(0)) out(qualifiedName(r.resource, o.metadata?.name ?? ''));
  }

  private async tableOf(client: ResourceClient, ns: string): Promise<TableDoc> {
    const t = await this.ctx.rest.request<TableDoc>({ path: client.path(ns), accept: TABLE_ACCEPT, query: this.query() });
    this.rv = t.metadata?.resourceVersion ?? '';
    return t;
  }

  private fail(e: unknown): void {
    process.stderr.write(`${errorLine(e)}\n`);
    this.failed = true;
    process.exitCode = 1;
  }

  finish(reqs: readonly ResourceRequest[]): void {
    if (this.format === 'json' || this.format === 'yaml') {
      const single = reqs.length === 1 && reqs[0]?.names.length === 1;
      const v = single && this.objects.length === 1 ? this.objects[0] : asList(this.objects);
      if (this.objects.length > 0 || !this.failed) {
        if (this.objects.length === 0 && this.flags.watch !== true) return this.none(reqs);
        process.stdout.write(this.format === 'json' ? `${toJson(v)}\n` : toYaml(v));
      }
      return;
    }
    if (this.printedTables === 0 && !this.failed && this.format !== 'name') this.none(reqs);
  }

  private none(reqs: readonly ResourceRequest[]): void {
    const namespaced = reqs.some((r) => r.resource.namespaced);
    if (reqs.some((r) => r.names.length > 0)) return;
    const where = namespaced && this.flags.allNamespaces !== true ? ` in ${this.ctx.namespace} namespace` : '';
    process.stderr.write(`No resources found${where}.\n`);
  }

  /** -w: one line per change from the list's resourceVersion, as kubectl's watch printing (rows without a header). */
  async watch(r: ResourceRequest): Promise<void> {
    const client = this.ctx.client(r.resource);
    const ac = new AbortController();
    const stop = (): void => ac.abort();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    const table = this.format === 'table' || this.format === 'wide';
    const fieldSelector = r.names.length === 1 ? `metadata.name=${r.names[0] ?? ''}` : this.flags.fieldSelector;
    try {
      for await (const ev of this.ctx.rest.watch<TableDoc & KubeObject>({
        path: client.path(this.ns(r)),
        query: { resourceVersion: this.rv, labelSelector: this.flags.selector, fieldSelector },
        ...(table ? { accept: TABLE_ACCEPT } : {}),
        signal: ac.signal,
      })) {
        if (ev.type === 'BOOKMARK') continue;
        if (ev.type === 'ERROR') throw new CliError('CLI_WAIT', `watch ended: ${String((ev.object as { message?: string }).message ?? '')}`);
        if (!table) {
          const o = ev.object as KubeObject;
          if (this.format === 'name') out(qualifiedName(r.resource, o.metadata?.name ?? ''));
          else process.stdout.write(this.format === 'json' ? `${toJson(o)}\n` : `---\n${toYaml(o)}`);
          continue;
        }
        const rows = tableRows(ev.object, this.layout(r));
        // Nothing listed yet: the first change brings the header, as kubectl prints it.
        if (this.printedTables++ === 0 && this.flags.noHeaders !== true) rows.unshift(tableHeader(ev.object, this.layout(r)));
        for (const line of alignColumns(rows, this.widths)) out(line);
      }
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    }
  }
}

