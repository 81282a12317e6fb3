// `setpoint scheduler --kubeconfig FILE`: the scheduler alone, on any Setpoint API server, leader-elected
// on the Lease kube-system/kube-scheduler by default. Its caches fill while it stands by; once it leads,
// every write (bindings, pod status, events, preemptions) carries its fencing token. As kube-scheduler:
// losing the lease ends the process with exit 1 (a fresh process campaigns again); SIGTERM/SIGINT stops the
// loop, lets its writes finish, releases the lease and exits 0.
import type { Command } from 'commander';
import { SchedulerRunner } from '../scheduler/scheduler-runner.js';
import { addComponentOptions, parseComponentOptions, runLeaderElectedComponent } from './leader-elected.js';

const COMPONENT = 'kube-scheduler';

export function registerSchedulerCommand(program: Command): void {
  const cmd = program
    .command('scheduler')
    .description('run the scheduler: place pending pods on nodes through the API server, leader-elected so several can run for high availability');
  addComponentOptions(cmd, COMPONENT);
  cmd.action(async (opts: Record<string, unknown>) => {
    const flags = parseComponentOptions('scheduler', opts, COMPONENT);
    await runLeaderElectedComponent(flags, {
      command: 'scheduler',
      userAgent: 'setpoint-scheduler/v0.1.0',
      startMessage: 'starting the scheduler',
      make: (rest, election) => {
        const runner = new SchedulerRunner({ rest, writeRest: election.writeRest, log: flags.log });
        return { startInformers: (s) => runner.startInformers(s), run: (leading) => runner.run(leading), informersStopped: () => runner.informersStopped() };
      },
    });
  });
}
