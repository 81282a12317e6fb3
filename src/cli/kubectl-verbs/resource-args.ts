// kubectl's resource arguments: `TYPE[,TYPE…] [NAME…]` or `TYPE/NAME …`, resolved through discovery into
// what each verb walks: a resource and the names asked for (none: every object, by selector).
import { CliError } from './cli-error.js';
import type { ApiResource, Discovery } from './discovery.js';

export interface ResourceRequest {
  readonly resource: ApiResource;
  /** Empty: all (a list). */
  readonly names: readonly string[];
}

export function resolveArgs(d: Discovery, args: readonly string[], verb: string): ResourceRequest[] {
  if (args.length === 0) {
    throw new CliError('CLI_USAGE', `You must specify the type of resource to ${verb}. Use "setpoint api-resources" for a complete list of supported resources.`);
  }
  const first = args[0] ?? '';
  if (args.some((a) => a.includes('/'))) {
    const out: ResourceRequest[] = [];
    for (const a of args) {
      const i = a.indexOf('/');
      if (i <= 0 || i === a.length - 1) throw new CliError('CLI_USAGE', `there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'setpoint ${verb} resource/<resource_name>' instead of 'setpoint ${verb} resource resource/<resource_name>'`);
      const resource = d.forArg(a.slice(0, i));
      const name = a.slice(i + 1);
      const same = out.find((r) => r.resource === resource);
      if (same) (same.names as string[]).push(name);
      else out.push({ resource, names: [name] });
    }
    return out;
  }
  const types = first.split(',').filter((t) => t !== '');
  const names = args.slice(1);
  return types.map((t) => ({ resource: d.forArg(t), names }));
}
