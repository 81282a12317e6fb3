// `setpoint describe TYPE [NAME…] | TYPE/NAME | -l`: kubectl's layout for pods, deployments, replica sets
// and nodes (describe-kinds.ts), a generic one for other kinds, each with the object's events at the
// bottom (matched by kind, name and, when the event records it, uid).
import type { Command } from 'commander';
import type { KubeObject } from '../../client/kube-object.js';
import { apiVersionOf } from '../../client/resource-client.js';
import { EVENTS, PODS, REPLICASETS } from '../../client/resource-types.js';
import { addClientFlags, runVerb, type CliContext, type ClientFlags } from './cli-context.js';
import { errorLine } from './cli-error.js';
import { describeConfigMap, describeDeployment, describeNode, describePod, describeReplicaSet, selectorString, type Related } from './describe-kinds.js';
import { asObj, DescribeWriter, eventsSection, labelsAndAnnotations, str } from './describe-writer.js';
import type { ApiResource } from './discovery.js';
import { resolveArgs } from './resource-args.js';

interface DescribeFlags extends ClientFlags {
  selector?: string;
  allNamespaces?: boolean;
}

export function registerDescribeVerb(program: Command): void {
  addClientFlags(
    program
      .command('describe')
      .description("show an object in kubectl describe's layout, with its events at the bottom")
      .argument('<resources...>', 'TYPE [NAME...] or TYPE/NAME ... (a TYPE alone: every object of it)')
      .option('-l, --selector <query>', 'describe the objects that match this label selector')
      .option('-A, --all-namespaces', 'look in every namespace'),
  ).action(async (args: string[], flags: DescribeFlags) => {
    await runVerb(flags, async (ctx) => {
      const reqs = resolveArgs(await ctx.resources(), args, 'describe');
      let first = true;
      for (const r of reqs) {
        const ns = r.resource.namespaced && flags.allNamespaces !== true ? ctx.namespace : '';
        let objs: KubeObject[] = [];
        if (r.names.length === 0) objs = (await ctx.client(r.resource).listAll(ns, flags.selector !== undefined ? { labelSelector: flags.selector } : {})).items;
        for (const name of r.names) {
          try {
            objs.push(await ctx.client(r.resource).get(ns, name));
          } catch (e) {
            process.stderr.write(`${errorLine(e)}\n`);
            process.exitCode = 1;
          }
        }
        for (const o of objs) {
          const text = await describeOne(ctx, r.resource, o);
          process.stdout.write(first ? text : `\n\n${text}`);
          first = false;
        }
      }
    });
  });
}

/** The events about `o`, as kubectl's describe searches them. */
export async function eventsFor(ctx: CliContext, kind: string, o: KubeObject): Promise<KubeObject[]> {
  const name = o.metadata?.name ?? '';
  const ns = o.metadata?.namespace ?? '';
  const list = await ctx.client(EVENTS).listAll(ns, { fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name}` });
  const uid = o.metadata?.uid;
  return list.items.filter((e) => {
    const u = str(asObj(e.involvedObject).uid);
    return u === '' || uid === undefined || u === uid;
  });
}

async function relatedOf(ctx: CliContext, r: ApiResource, o: KubeObject): Promise<Related> {
  const ns = o.metadata?.namespace ?? '';
  const uid = o.metadata?.uid;
  const ownedBy = (x: KubeObject): boolean => (x.metadata?.ownerReferences ?? []).some((ref) => ref.uid === uid);
  if (r.group === 'apps' && r.kind === 'Deployment') return { objects: (await ctx.client(REPLICASETS).listAll(ns)).items.filter(ownedBy) };
  if (r.group === 'apps' && r.kind === 'ReplicaSet') {
    const sel = selectorString(asObj(o.spec).selector);
    return { objects: (await ctx.client(PODS).listAll(ns, sel !== '<none>' && !sel.includes(' ') ? { labelSelector: sel } : {})).items.filter(ownedBy) };
  }
  if (r.group === '' && r.kind === 'Node') return { objects: (await ctx.client(PODS).listAll('', { fieldSelector: `spec.nodeName=${o.metadata?.name ?? ''}` })).items };
  return { objects: [] };
}

function describeGeneric(w: DescribeWriter, r: ApiResource, o: KubeObject): void {
  const meta = asObj(o.metadata);
  w.line(0, `Name:\t${str(meta.name)}`);
  if (meta.namespace !== undefined) w.line(0, `Namespace:\t${str(meta.namespace)}`);
  labelsAndAnnotations(w, 0, meta);
  w.line(0, `API Version:\t${str(o.apiVersion, apiVersionOf(r))}`);
  w.line(0, `Kind:\t${str(o.kind, r.kind)}`);
  for (const [k, v] of Object.entries(o)) {
    if (k === 'metadata' || k === 'apiVersion' || k === 'kind') continue;
    generic(w, 0, k, v);
  }
}

/** kubectl's unstructured describer: keys title-cased (`replicaFailure` → `Replica Failure`), nested by level. */
function generic(w: DescribeWriter, level: number, key: string, v: unknown): void {
  const title = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/^./, (c) => c.toUpperCase());
  if (Array.isArray(v)) {
    w.line(level, `${title}:`);
    for (const item of v) {
      if (typeof item === 'object' && item !== null) for (const [k, x] of Object.entries(item)) generic(w, level + 1, k, x);
      else w.line(level + 1, str(item));
    }
    return;
  }
  if (typeof v === 'object' && v !== null) {
    w.line(level, `${title}:`);
    for (const [k, x] of Object.entries(v)) generic(w, level + 1, k, x);
    return;
  }
  w.line(level, `${title}:\t${str(v)}`);
}

export async function describeOne(ctx: CliContext, r: ApiResource, o: KubeObject): Promise<string> {
  const w = new DescribeWriter();
  const now = Date.now();
  const related = await relatedOf(ctx, r, o);
  const core = r.group === '';
  if (core && r.kind === 'Pod') describePod(w, o);
  else if (r.group === 'apps' && r.kind === 'Deployment') describeDeployment(w, o, related);
  else if (r.group === 'apps' && r.kind === 'ReplicaSet') describeReplicaSet(w, o, related);
  else if (core && r.kind === 'Node') describeNode(w, o, related, now);
  else if (core && r.kind === 'ConfigMap') describeConfigMap(w, o);
  else describeGeneric(w, r, o);
  eventsSection(w, await eventsFor(ctx, r.kind, o), now);
  return w.render();
}
