// Where one manifest goes: its resource (from discovery) and namespace (its own, else `-n`, else the
// context's), refusing, as kubectl does, a manifest whose namespace contradicts an explicit `-n`.
import type { KubeObject } from '../../client/kube-object.js';
import type { CliContext } from './cli-context.js';
import { CliError } from './cli-error.js';
import type { ApiResource, Discovery } from './discovery.js';

export interface ObjectTarget {
  readonly resource: ApiResource;
  readonly namespace: string;
  readonly name: string;
}

export function targetOf(ctx: CliContext, d: Discovery, o: KubeObject, source: string): ObjectTarget {
  const resource = d.forKind(o.apiVersion ?? '', o.kind ?? '', { name: o.metadata?.name ?? '', namespace: o.metadata?.namespace ?? '', source });
  const name = o.metadata?.name ?? '';
  if (name === '') throw new CliError('CLI_INPUT', `error when retrieving current configuration of "${source}": resource name may not be empty`);
  if (!resource.namespaced) return { resource, namespace: '', name };
  const own = o.metadata?.namespace;
  if (own !== undefined && own !== '' && ctx.explicitNamespace && own !== ctx.namespace) {
    throw new CliError('CLI_INPUT', `the namespace from the provided object "${own}" does not match the namespace "${ctx.namespace}". You must pass '--namespace=${own}' to perform this operation.`);
  }
  return { resource, namespace: own !== undefined && own !== '' ? own : ctx.namespace, name };
}
