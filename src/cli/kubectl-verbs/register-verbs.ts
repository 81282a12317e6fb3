// The client-side verbs (`apply`, `get`, `describe`, `delete`, `events`) on the `setpoint` command.
import type { Command } from 'commander';
import { registerApplyVerb } from './apply-verb.js';
import { registerDeleteVerb } from './delete-verb.js';
import { registerDescribeVerb } from './describe-verb.js';
import { registerEventsVerb } from './events-verb.js';
import { registerGetVerb } from './get-verb.js';
import { registerWhyVerb } from './why-verb.js';

export function registerClientVerbs(program: Command): void {
  registerApplyVerb(program);
  registerGetVerb(program);
  registerDescribeVerb(program);
  registerDeleteVerb(program);
  registerEventsVerb(program);
  registerWhyVerb(program);
}
