// The `setpoint` command as a tree of subcommands, built without running anything, so tests can walk it
// (every command and flag documented: test/cli/help.test.ts).
import { Command } from 'commander';
import { registerAgentCommand } from './agent-command.js';
import { registerApiServerCommand } from './apiserver-command.js';
import { registerControllerManagerCommand } from './controller-manager-command.js';
import { registerClientVerbs } from './kubectl-verbs/register-verbs.js';
import { registerSchedulerCommand } from './scheduler-command.js';
import { registerServerCommand } from './server-command.js';
import { registerSimulateCommand } from './simulate-command.js';
import { registerSnapshotCommand } from './snapshot-command.js';
import { registerStoreCommand } from './store-command.js';
import { registerUpCommand } from './up-command.js';

export function buildProgram(): Command {
  const program = new Command('setpoint').description('Setpoint: a small, highly available control plane on an etcd-compatible Raft store.');
  registerStoreCommand(program);
  registerServerCommand(program);
  registerUpCommand(program);
  registerApiServerCommand(program);
  registerSchedulerCommand(program);
  registerAgentCommand(program);
  registerSimulateCommand(program);
  registerSnapshotCommand(program);
  registerControllerManagerCommand(program);
  registerClientVerbs(program);
  return program;
}
