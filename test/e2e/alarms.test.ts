// The NOSPACE alarm is replicated state: raised through the log when a member finds the store over its
// quota, it refuses writes that add data on every member until an operator disarms it. A member that
// caught up from a snapshot, or restarted, must list it and refuse those writes as the others do.
import { describe, expect, it } from 'vitest';
import type { Etcd3 } from 'etcd3';
import { startCluster } from './helpers/cluster.js';
import { expectSameHistory } from './helpers/checks.js';
import { waitFor } from '../../src/harness/wait.js';

const QUOTA = 200_000;
const NO_SPACE = 'database space exceeded';

/** The outcome of one put: 'ok', or the error's message. */
async function tryPut(client: Etcd3, key: string, value: string): Promise<string> {
  try {
    await client.put(key).value(value);
    return 'ok';
  } catch (e) {
    return (e as Error).message;
  }
}

describe('the NOSPACE alarm', () => {
  it('holds on a member that caught up from a snapshot and on one that restarted, until disarmed', async () => {
    const cluster = await startCluster({
      snapshotCount: 10,
      flags: ['--experimental-snapshot-catchup-entries', '10', '--quota-backend-bytes', String(QUOTA)],
    });
    const leader = await cluster.waitForLeader();
    const [behind, restarted] = cluster.running().filter((n) => n !== leader) as [string, string];
    await cluster.kill(behind, 'SIGKILL');

    // Fill the store past its quota: writes start failing, and the alarm is raised.
    const client = cluster.client();
    let i = 0;
    await waitFor('a put refused for want of space', async () => ((await tryPut(client, `fill/${i++}`, 'x'.repeat(10_000))).includes(NO_SPACE) ? true : undefined));
    const alarms = async (name: string): Promise<string[]> => {
      const r = await cluster.ctl(['alarm', 'list'], [name]);
      expect(r.code, r.stderr).toBe(0);
      return r.stdout.split('\n').filter((l) => l !== '').sort();
    };
    const raised = await alarms(leader);
    expect(raised.join('\n')).toContain('alarm:NOSPACE');

    // Space freed (deletes are allowed) and the log moved on well past the alarm: the member that was down
    // can only catch up from a snapshot.
    expect((await cluster.ctl(['del', 'fill/', '--prefix'])).code).toBe(0);
    for (let j = 0; j < 30; j++) await client.delete().key(`nothing/${j}`);
    await cluster.restart(behind);
    await cluster.waitCaughtUp(behind);
    expect(cluster.logSince(behind)).toContain('installed snapshot from leader');
    expect(await alarms(behind), `alarms on ${behind}, which caught up from a snapshot`).toEqual(raised);

    await cluster.kill(restarted, 'SIGKILL');
    await cluster.restart(restarted);
    await cluster.waitCaughtUp(restarted);
    expect(await alarms(restarted), `alarms on ${restarted} after a restart`).toEqual(raised);

    // Raised, the alarm refuses writes that add data through every member, whatever the space now free.
    for (const name of cluster.running()) expect(await tryPut(cluster.memberClient(name), `after/${name}`, 'v'), `a put through ${name}`).toContain(NO_SPACE);
    expect((await cluster.ctl(['alarm', 'disarm'])).code).toBe(0);
    for (const name of cluster.running()) {
      await waitFor(`${name} to accept writes again`, async () => ((await tryPut(cluster.memberClient(name), `after/${name}`, 'v')) === 'ok' ? true : undefined));
      expect(await alarms(name)).toEqual([]);
    }
    await expectSameHistory(cluster);
  }, 120_000);
});
