// The leader election flags of Kubernetes' components (component-base's LeaderElectionConfiguration:
// --leader-elect, --leader-elect-lease-duration, --leader-elect-renew-deadline, --leader-elect-retry-period,
// --leader-elect-resource-lock, --leader-elect-resource-name, --leader-elect-resource-namespace), shared by
// `setpoint scheduler` and `setpoint controller-manager`. Kubernetes' names; Setpoint's shorter defaults
// (SETPOINT_LEADER_ELECTION_TIMING) so failover takes under 3 s rather than 15–17 s.
import { Option, type Command } from 'commander';
import { DurationError, formatDurationMs, parseDurationMs } from '../apiserver/duration.js';
import { SETPOINT_LEADER_ELECTION_TIMING, validateTiming, LeaderElectionConfigError, type LeaderElectionTiming } from '../client/leader-election.js';

export interface LeaderElectionFlags {
  readonly leaderElect: boolean;
  readonly timing: LeaderElectionTiming;
  readonly resourceName: string;
  readonly resourceNamespace: string;
}

export class FlagError extends Error {
  readonly code = 'FLAG_INVALID';
  constructor(message: string) {
    super(message);
    this.name = 'FlagError';
  }
}

const T = SETPOINT_LEADER_ELECTION_TIMING;

/** Adds the flags to a command; `resourceName` is the component's Lease (`kube-scheduler`, …). */
export function addLeaderElectionFlags(cmd: Command, resourceName: string): void {
  cmd
    .addOption(new Option('--leader-elect [bool]', 'start a leader election client and gain leadership before running the main loop (run several for high availability) (default: true)'))
    .addOption(
      new Option(
        '--leader-elect-lease-duration <duration>',
        `how long a candidate waits after it last saw the leader renew before it takes over: the longest a dead leader holds the role; whole seconds (default: ${formatDurationMs(T.leaseDurationMs)})`,
      ),
    )
    .addOption(new Option('--leader-elect-renew-deadline <duration>', `how long the leader keeps trying to renew before it stops leading; less than the lease duration (default: ${formatDurationMs(T.renewDeadlineMs)})`))
    .addOption(new Option('--leader-elect-retry-period <duration>', `how long candidates wait between attempts to acquire, and the leader between renewals (default: ${formatDurationMs(T.retryPeriodMs)})`))
    .addOption(new Option('--leader-elect-resource-lock <kind>', "the kind of object the election runs on; only 'leases' (default: leases)"))
    .addOption(new Option('--leader-elect-resource-name <name>', `the name of the Lease (default: ${resourceName})`))
    .addOption(new Option('--leader-elect-resource-namespace <namespace>', 'the namespace of the Lease (default: kube-system)'));
}

function bad(flag: string, value: string, why: string): FlagError {
  return new FlagError(`invalid argument ${JSON.stringify(value)} for "--${flag}" flag: ${why}`);
}

function durationFlag(flag: string, v: unknown, fallback: number): number {
  if (v === undefined) return fallback;
  const text = String(v);
  try {
    const ms = parseDurationMs(text);
    if (ms <= 0) throw bad(flag, text, 'must be greater than 0');
    return ms;
  } catch (e) {
    if (e instanceof DurationError) throw bad(flag, text, e.message);
    throw e;
  }
}

/** Commander's parsed options (camelCase) into checked settings. Throws FlagError. */
export function parseLeaderElectionFlags(opts: Readonly<Record<string, unknown>>, resourceName: string): LeaderElectionFlags {
  const elect = opts.leaderElect;
  let leaderElect = true;
  if (elect !== undefined && elect !== true) {
    const s = String(elect);
    if (/^(1|t|T|true|TRUE|True)$/.test(s)) leaderElect = true;
    else if (/^(0|f|F|false|FALSE|False)$/.test(s)) leaderElect = false;
    else throw bad('leader-elect', s, 'must be true or false');
  }
  const lock = opts.leaderElectResourceLock;
  if (lock !== undefined && lock !== 'leases') throw bad('leader-elect-resource-lock', String(lock), "only 'leases' is supported");
  const timing: LeaderElectionTiming = {
    leaseDurationMs: durationFlag('leader-elect-lease-duration', opts.leaderElectLeaseDuration, T.leaseDurationMs),
    renewDeadlineMs: durationFlag('leader-elect-renew-deadline', opts.leaderElectRenewDeadline, T.renewDeadlineMs),
    retryPeriodMs: durationFlag('leader-elect-retry-period', opts.leaderElectRetryPeriod, T.retryPeriodMs),
  };
  try {
    validateTiming(timing);
  } catch (e) {
    if (e instanceof LeaderElectionConfigError) throw new FlagError(`leader election: ${e.message}`);
    throw e;
  }
  const name = opts.leaderElectResourceName === undefined ? resourceName : String(opts.leaderElectResourceName);
  const namespace = opts.leaderElectResourceNamespace === undefined ? 'kube-system' : String(opts.leaderElectResourceNamespace);
  if (name === '' || name.includes('/')) throw bad('leader-elect-resource-name', name, 'must be a non-empty name without /');
  if (namespace === '' || namespace.includes('/')) throw bad('leader-elect-resource-namespace', namespace, 'must be a non-empty namespace without /');
  return { leaderElect, timing, resourceName: name, resourceNamespace: namespace };
}
