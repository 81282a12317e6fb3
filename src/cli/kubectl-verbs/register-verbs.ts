// The client-side verbs (`apply`, `get`, `describe`, `delete`, `events`, `why`) on the `setpoint` command.
import type { Command } from 'commander';
import { registerApplyVerb } from './apply-verb.js';
import { registerDeleteVerb } from './delete-verb.js';
import { registerEventsVerb } from './events-verb.js';
import { registerGetVerb } from './get-verb.js';

export function registerClientVerbs(program: Command): void {
  registerApplyVerb(program);
  registerGetVerb(program);
  registerDeleteVerb(program);
  registerEventsVerb(program);
}
