// `setpoint apply -f FILE|DIR|- [-R]`: server-side apply of every manifest with field manager `setpoint`,
// one kubectl line per object (`deployment.apps/web created|configured|unchanged`), decided from what existed
// before and the resourceVersion the answer carries. One object's failure does not stop the others; any
// failure makes the exit code 1.
import type { Command } from 'commander';
import { isNotFound } from '../../client/api-status-error.js';
import type { KubeObject } from '../../client/kube-object.js';
import { addClientFlags, out, runVerb, type ClientFlags } from './cli-context.js';
import { errorLine } from './cli-error.js';
import { qualifiedName } from './discovery.js';
import { readManifests } from './manifests.js';
import { targetOf } from './object-target.js';

export const FIELD_MANAGER = 'setpoint';

interface ApplyFlags extends ClientFlags {
  filename: string[];
  recursive?: boolean;
  forceConflicts?: boolean;
  dryRun?: boolean;
}

const collect = (v: string, prev: string[]): string[] => [...prev, v];

export function registerApplyVerb(program: Command): void {
  addClientFlags(
    program
      .command('apply')
      .description('apply manifests with server-side apply (field manager "setpoint"): create what is missing, update what differs')
      .option('-f, --filename <path>', 'a file, a folder, or - for stdin (repeatable)', collect, [])
      .option('-R, --recursive', 'also read the folders under a folder given with -f')
      .option('--force-conflicts', 'take over fields another field manager owns instead of failing with a conflict')
      .option('--dry-run', 'send the requests with dryRun=All: nothing is stored'),
  ).action(async (flags: ApplyFlags) => {
    await runVerb(flags, async (ctx) => {
      const manifests = readManifests(flags.filename, flags.recursive === true);
      const d = await ctx.resources();
      for (const m of manifests) {
        try {
          const t = targetOf(ctx, d, m.object, m.source);
          const client = ctx.client(t.resource);
          let before: KubeObject | undefined;
          try {
            before = await client.get(t.namespace, t.name);
          } catch (e) {
            if (!isNotFound(e)) throw e;
          }
          const body: KubeObject = { ...m.object, metadata: { ...m.object.metadata, ...(t.namespace !== '' ? { namespace: t.namespace } : {}) } };
          const after = await client.apply(body, FIELD_MANAGER, { force: flags.forceConflicts === true, dryRun: flags.dryRun === true });
          const verb = before === undefined ? 'created' : before.metadata?.resourceVersion === after.metadata?.resourceVersion ? 'unchanged' : 'configured';
          out(`${qualifiedName(t.resource, t.name)} ${verb}${flags.dryRun === true ? ' (server dry run)' : ''}`);
        } catch (e) {
          process.stderr.write(`${errorLine(e)}\n`);
          process.exitCode = 1;
        }
      }
    });
  });
}
