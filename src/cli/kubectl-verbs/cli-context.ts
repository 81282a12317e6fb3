// What every client verb shares: kubectl's connection flags (`--kubeconfig`, KUBECONFIG, `--context`,
// `-n/--namespace`), the REST client they select, discovery loaded once, and the wrapper that turns any
// failure into kubectl's one line on stderr with exit code 1.
import type { Command } from 'commander';
import { loadKubeconfig } from '../../client/kubeconfig.js';
import { RestClient } from '../../client/rest-client.js';
import { ResourceClient, type ResourceType } from '../../client/resource-client.js';
import type { KubeObject } from '../../client/kube-object.js';
import { errorLine } from './cli-error.js';
import { Discovery } from './discovery.js';

export interface ClientFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

export function addClientFlags(cmd: Command): Command {
  return cmd
    .option('--kubeconfig <file>', 'path to the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)')
    .option('--context <name>', 'the kubeconfig context to use (default: its current-context)')
    .option('-n, --namespace <ns>', "the namespace of this request (default: the context's, else default)");
}

export class CliContext {
  private discovery: Promise<Discovery> | undefined;

  private constructor(
    readonly rest: RestClient,
    /** The namespace to use: `-n`, else the context's, else `default`. */
    readonly namespace: string,
    /** `-n` was given (a manifest's own namespace must then agree). */
    readonly explicitNamespace: boolean,
  ) {}

  static open(flags: ClientFlags): CliContext {
    const loaded = loadKubeconfig({
      ...(flags.kubeconfig !== undefined ? { path: flags.kubeconfig } : {}),
      ...(flags.context !== undefined ? { context: flags.context } : {}),
    });
    const rest = new RestClient({ ...loaded.config, userAgent: 'setpoint/v0.1.0 (cli)' });
    const ns = flags.namespace !== undefined && flags.namespace !== '' ? flags.namespace : loaded.namespace;
    return new CliContext(rest, ns, flags.namespace !== undefined && flags.namespace !== '');
  }

  resources(): Promise<Discovery> {
    this.discovery ??= Discovery.load(this.rest);
    return this.discovery;
  }

  client(r: ResourceType): ResourceClient<KubeObject> {
    return new ResourceClient<KubeObject>(this.rest, r);
  }

  close(): void {
    this.rest.close();
  }
}

/** Runs a verb: output on stdout, a failure as kubectl's line on stderr and exit code 1. */
export async function runVerb(flags: ClientFlags, body: (ctx: CliContext) => Promise<void>): Promise<void> {
  let ctx: CliContext | undefined;
  try {
    ctx = CliContext.open(flags);
    await body(ctx);
  } catch (e) {
    process.stderr.write(`${errorLine(e)}\n`);
    process.exitCode = 1;
  } finally {
    ctx?.close();
  }
}

/** Writes one line to stdout (the CLI's output; logs go to stderr through pino). */
export function out(line: string): void {
  process.stdout.write(`${line}\n`);
}
