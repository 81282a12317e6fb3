// The leader election flags: Kubernetes' names, Setpoint's defaults, Go durations, and client-go's checks
// as one readable line naming the flag.
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { addLeaderElectionFlags, parseLeaderElectionFlags } from '../../src/cli/leader-election-flags.js';

function parse(args: string[]) {
  const cmd = new Command('x').exitOverride();
  addLeaderElectionFlags(cmd, 'kube-scheduler');
  cmd.parse(args, { from: 'user' });
  return parseLeaderElectionFlags(cmd.opts(), 'kube-scheduler');
}

describe('leader election flags', () => {
  it('defaults to a 2 s lease, 1.5 s renew deadline and 0.4 s retry on kube-system/<component>', () => {
    expect(parse([])).toEqual({ leaderElect: true, timing: { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 400 }, resourceName: 'kube-scheduler', resourceNamespace: 'kube-system' });
  });

  it("takes Kubernetes' spellings", () => {
    const f = parse(['--leader-elect=false', '--leader-elect-lease-duration', '15s', '--leader-elect-renew-deadline', '10s', '--leader-elect-retry-period', '2s', '--leader-elect-resource-name', 'sched', '--leader-elect-resource-namespace', 'ns']);
    expect(f).toEqual({ leaderElect: false, timing: { leaseDurationMs: 15000, renewDeadlineMs: 10000, retryPeriodMs: 2000 }, resourceName: 'sched', resourceNamespace: 'ns' });
    expect(parse(['--leader-elect']).leaderElect).toBe(true);
  });

  it.each([
    [['--leader-elect-lease-duration', '2'], 'invalid argument "2" for "--leader-elect-lease-duration" flag: time: missing unit in duration "2"'],
    [['--leader-elect', 'maybe'], 'invalid argument "maybe" for "--leader-elect" flag: must be true or false'],
    [['--leader-elect-renew-deadline', '3s'], 'leader election: leaseDuration must be greater than renewDeadline'],
    [['--leader-elect-resource-lock', 'endpoints'], 'invalid argument "endpoints" for "--leader-elect-resource-lock" flag: only \'leases\' is supported'],
  ])('%j: %s', (args, message) => {
    expect(() => parse(args)).toThrow(message);
  });
});
