// An agent restart, simulated by a second runtime on the same root: running containers are adopted (same
// process, no duplicate, output still captured), one that ended meanwhile is seen with its real exit code
// and handled by the restart policy.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../src/harness/wait.js';
import { processStartTime } from '../../src/agent/proc-stat.js';
import { Fixture, containerStatus, pod, readAll, waitContainer } from './runtime-fixture.js';

let fx: Fixture;
beforeEach(() => {
  fx = new Fixture();
});
afterEach(async () => {
  await fx.cleanup();
});

describe('adoption after an agent restart', () => {
  it('adopts a running container: same process, output still logged, restarts counted on', async () => {
    const rt1 = fx.runtime();
    const p = pod('adopt', { containers: [{ name: 'app', command: ['sh', '-c', 'i=0; while true; do i=$((i+1)); echo tick $i; sleep 0.05; done'] }] });
    const uid = p.metadata.uid ?? '';
    rt1.syncPod(p);
    await waitContainer(rt1, p, 'running', (c) => c.state.running !== undefined);
    const pid = rt1.pids(uid).app ?? 0;
    const ip = rt1.status(uid)?.podIP;
    await rt1.close(); // the agent goes away; its pods do not

    const rt2 = fx.runtime();
    expect(rt2.uids()).toEqual([uid]);
    expect(rt2.pids(uid).app).toBe(pid);
    expect(rt2.status(uid)?.podIP).toBe(ip);
    expect(containerStatus(rt2, p)?.restartCount).toBe(0);
    expect(processStartTime(pid)).toBeDefined();
    // The output keeps flowing into the same log through the FIFO.
    const before = (await readAll(rt2.logs(uid, 'app'))).split('\n').length;
    await waitFor('more output after adoption', async () => (await readAll(rt2.logs(uid, 'app'))).split('\n').length > before + 5);
    // The same pod synced again from the API does not start a second process.
    rt2.syncPod(p);
    expect(rt2.pids(uid).app).toBe(pid);

    process.kill(-pid, 'SIGKILL');
    const c = await waitContainer(rt2, p, 'restarted by the new runtime', (s) => s.restartCount === 1 && s.state.running !== undefined);
    expect(c.lastState.terminated?.exitCode).toBe(137);
  });

  it('learns the exit code of a container that ended while no agent was watching', async () => {
    const rt1 = fx.runtime();
    const p = pod('away', { restartPolicy: 'OnFailure', containers: [{ name: 'app', command: ['sh', '-c', 'while [ ! -f "$SETPOINT_ROOT/go" ]; do sleep 0.05; done; exit 3'] }] });
    const uid = p.metadata.uid ?? '';
    rt1.syncPod(p);
    await waitContainer(rt1, p, 'running', (c) => c.state.running !== undefined);
    const pid = rt1.pids(uid).app ?? 0;
    await rt1.close();
    // Let it finish while nobody watches.
    writeFileSync(join(fx.root, 'pods', uid, 'root', 'app', 'go'), '');
    await waitFor('the process to end', () => processStartTime(pid) === undefined);

    const rt2 = fx.runtime();
    const c = await waitContainer(rt2, p, 'restarted after exit 3', (s) => s.restartCount >= 1);
    expect(c.lastState.terminated ?? c.state.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
  });
});
