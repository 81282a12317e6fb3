// How a leader-elected component (`setpoint scheduler`, `setpoint controller-manager`) runs its loops:
// with --leader-elect, an elector on the component's Lease, writes through a client that carries its
// fencing token, the loops run only while leading, and a lost lease ends the process with exit 1 as
// Kubernetes' components do (a fresh process campaigns again with empty state); without, the loops run at
// once with a plain client. A stop (the signal) ends the loops, then releases the Lease.
import type { Logger } from 'pino';
import { LeaderElector } from '../client/leader-election.js';
import type { RestClient } from '../client/rest-client.js';
import type { LeaderElectionFlags } from './leader-election-flags.js';

export interface LeaderElected {
  readonly elector: LeaderElector | undefined;
  /** For every write the loops make: fenced when leader-elected. */
  readonly writeRest: RestClient;
  /** Runs `lead` while leading (or at once); resolves 'stopped' after the signal, 'lost' when leadership was lost. */
  run(signal: AbortSignal, lead: (leading: AbortSignal) => Promise<void>): Promise<'stopped' | 'lost'>;
}

export function leaderElected(rest: RestClient, flags: LeaderElectionFlags, log: Logger): LeaderElected {
  if (!flags.leaderElect) {
    return {
      elector: undefined,
      writeRest: rest,
      run: async (signal, lead) => {
        await lead(signal);
        return 'stopped';
      },
    };
  }
  let lead: (leading: AbortSignal) => Promise<void> = () => Promise.resolve();
  let lost = false;
  let stopSignal: AbortSignal | undefined;
  const elector: LeaderElector = new LeaderElector(rest, {
    ...flags.timing,
    lock: { namespace: flags.resourceNamespace, name: flags.resourceName },
    log,
    callbacks: {
      onStartedLeading: (leading) => lead(leading),
      onStoppedLeading: () => {
        if (stopSignal?.aborted !== true) lost = true;
      },
      onNewLeader: (identity) => log.info({ leader: identity, self: identity === elector.identity }, 'new leader elected'),
    },
  });
  return {
    elector,
    writeRest: elector.fencedClient(rest),
    async run(signal, l) {
      lead = l;
      stopSignal = signal;
      await elector.run(signal);
      return lost ? 'lost' : 'stopped';
    },
  };
}

/** Kubernetes' components exit 1 when they lose their lease; the log line is written first. */
export async function exitLeadershipLost(log: Logger, identity: string | undefined): Promise<never> {
  log.error({ identity }, 'leaderelection lost');
  // pino's destination is asynchronous: let it write the line before exiting.
  await new Promise<void>((resolve) => log.flush(() => resolve()));
  process.exit(1);
}
