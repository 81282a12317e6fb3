// `setpoint server` passes the controller manager's node-lifecycle flags (Kubernetes' names) through to the
// controller manager it runs, as given, the way it passes --controllers: a real one-member server, and
// the controller manager's command line read from /proc.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { LIFECYCLE_FLAGS } from '../../src/controllers/lifecycle-flags.js';
import { runCommand } from '../../src/harness/command.js';
import { setpointMain } from '../../src/harness/setpoint-main.js';
import { ServerMembers } from '../../src/harness/server-members.js';
import { waitFor } from '../../src/harness/wait.js';

const GIVEN = ['--node-monitor-grace-period=7s', '--node-startup-grace-period=9s', '--node-monitor-period=1s', '--node-eviction-rate=0.5', '--terminated-pod-gc-threshold=20'];

/** The argv of every live process whose command line mentions `needle`. */
function commandLines(needle: string): string[][] {
  const out: string[][] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const argv = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').filter((a) => a !== '');
      if (argv.some((a) => a.includes(needle))) out.push(argv);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

describe('setpoint server: the controller manager\'s node-lifecycle flags', () => {
  const dir = mkdtempSync(join(tmpdir(), 'setpoint-server-flags-'));
  let members: ServerMembers | undefined;
  afterAll(async () => {
    await members?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes each of them', () => {
    const server = buildProgram().commands.find((c) => c.name() === 'server');
    const flags = server?.options.map((o) => o.flags) ?? [];
    for (const f of LIFECYCLE_FLAGS) expect(flags).toContain(`--${f.name} <${f.kind}>`);
  });

  it.each([
    ['--node-monitor-grace-period=5', 'invalid argument "5" for "--node-monitor-grace-period" flag: time: missing unit in duration "5"'],
    ['--node-eviction-rate=-1', 'invalid argument "-1" for "--node-eviction-rate" flag: not a valid float'],
  ])('checks %s as the controller manager does: one line, exit 2, nothing started', async (flag, message) => {
    const dataDir = join(dir, 'bad');
    const r = await runCommand({ bin: process.execPath, args: [setpointMain(), 'server', `--data-dir=${dataDir}`, flag] });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 2, stderr: `setpoint server: ${message}\n` });
    expect(existsSync(dataDir)).toBe(false);
  });

  it('gives them to its controller manager as given', async () => {
    members = await ServerMembers.start(dir, { size: 1, flags: GIVEN });
    const argv = await waitFor('the member\'s controller manager', () => commandLines(join(dir, 'm1', 'kubeconfigs', 'controller-manager.kubeconfig')).find((a) => a.includes('controller-manager')), { timeoutMs: 60_000 });
    for (const flag of GIVEN) expect(argv).toContain(flag);
    const scheduler = commandLines(join(dir, 'm1', 'kubeconfigs', 'scheduler.kubeconfig')).find((a) => a.includes('scheduler'));
    expect(scheduler?.some((a) => a.startsWith('--node-'))).toBe(false);
  });
});
