// The stale-read switch exists for jepsen-lite to prove it catches stale reads; it must never reach a
// production deployment. With NODE_ENV=production the store refuses to start and says why.
import { describe, expect, it } from 'vitest';
import { startCluster } from './helpers/cluster.js';

describe('SETPOINT_UNSAFE_LOCAL_READS', () => {
  it('is refused with a clear error when NODE_ENV=production', async () => {
    await expect(startCluster({ size: 1, env: { SETPOINT_UNSAFE_LOCAL_READS: '1', NODE_ENV: 'production' } })).rejects.toThrow(
      /a exited \(1\) before serving:[\s\S]*SETPOINT_UNSAFE_LOCAL_READS is a test-only switch and is refused when NODE_ENV=production/,
    );
  }, 60_000);

  it('outside production, starts and warns that reads may be stale', async () => {
    const cluster = await startCluster({ size: 1, env: { SETPOINT_UNSAFE_LOCAL_READS: '1', NODE_ENV: 'test' } });
    expect(cluster.logSince('a')).toContain('SETPOINT_UNSAFE_LOCAL_READS is on: linearizable reads are served locally and may be stale (test only)');
  }, 60_000);
});
