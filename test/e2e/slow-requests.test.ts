// A write the cluster is slow to apply is reported in the log of the member that took it, as etcd warns
// of slow applies: one line at most a second, with the slowest request, the limit and how many were slow.
import { describe, expect, it } from 'vitest';
import { startCluster } from './helpers/cluster.js';
import { orUndefined, pause, waitFor } from '../../src/harness/wait.js';

interface LogLine {
  msg?: string;
  took?: string;
  expectedDuration?: string;
  request?: string;
  slowRequests?: number;
  role?: string;
}

describe('slow requests', () => {
  it('a leader that applies each commit 300 ms late logs its writes as too slow, at most once a second', async () => {
    // Slow elections keep the held-back leader in office.
    const cluster = await startCluster({ heartbeatMs: 200, electionMs: 4000, env: { SETPOINT_TEST_LEADER_APPLY_DELAY_MS: '300', NODE_ENV: 'test' } });
    const leader = await cluster.waitForLeader();
    const client = cluster.memberClient(leader);
    // The leader's own publish (its name and client URLs, proposed once it leads) is slow too: let it
    // apply there, and let the one-second window of its warning pass, before counting.
    await waitFor('every member published on the leader', async () => {
      const r = await orUndefined(client.cluster.memberList({}));
      return r && r.members.length === 3 && r.members.every((m) => m.clientURLs.length > 0) ? true : undefined;
    });
    await pause(1100);
    const mark = cluster.logMark(leader);
    const t0 = Date.now();
    for (let i = 0; i < 5; i++) await client.put(`slow/${i}`).value('v');
    const elapsed = Date.now() - t0;
    expect(elapsed).toBeGreaterThanOrEqual(5 * 300);

    const lines = cluster.logged<LogLine>(leader, 'request took too long', mark);
    // Five puts of at least 300 ms each in at least 1.5 s: the first is logged at once, and at most one
    // line a second follows.
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines.length).toBeLessThanOrEqual(1 + Math.floor(elapsed / 1000));
    expect(lines[0]).toMatchObject({ msg: 'request took too long', expectedDuration: '100ms', request: 'put', slowRequests: 1, role: 'leader' });
    for (const l of lines) expect(Number(l.took?.replace(/ms$/, ''))).toBeGreaterThanOrEqual(300);
  }, 120_000);
});
