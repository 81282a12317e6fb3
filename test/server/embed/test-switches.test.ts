// The store's test-only switches are off unless set, refused in production, and say what is wrong with a
// bad value.
import { describe, expect, it } from 'vitest';
import { leaderApplyDelayRequested, unsafeLocalReadsRequested } from '../../../src/server/embed/start-member.js';

describe('test-only switches', () => {
  it('SETPOINT_TEST_LEADER_APPLY_DELAY_MS: off by default, refused in production, checked', () => {
    expect(leaderApplyDelayRequested({})).toBe(0);
    expect(leaderApplyDelayRequested({ SETPOINT_TEST_LEADER_APPLY_DELAY_MS: '0', NODE_ENV: 'production' })).toBe(0);
    expect(leaderApplyDelayRequested({ SETPOINT_TEST_LEADER_APPLY_DELAY_MS: '1500' })).toBe(1500);
    expect(() => leaderApplyDelayRequested({ SETPOINT_TEST_LEADER_APPLY_DELAY_MS: '1500', NODE_ENV: 'production' })).toThrow(
      'SETPOINT_TEST_LEADER_APPLY_DELAY_MS is a test-only switch and is refused when NODE_ENV=production',
    );
    for (const bad of ['1.5', '-1', 'soon', '60001']) {
      expect(() => leaderApplyDelayRequested({ SETPOINT_TEST_LEADER_APPLY_DELAY_MS: bad })).toThrow(
        `SETPOINT_TEST_LEADER_APPLY_DELAY_MS: "${bad}" is not a whole number of milliseconds from 0 to 60000`,
      );
    }
  });

  it('SETPOINT_UNSAFE_LOCAL_READS: off by default, refused in production', () => {
    expect(unsafeLocalReadsRequested({})).toBe(false);
    expect(unsafeLocalReadsRequested({ SETPOINT_UNSAFE_LOCAL_READS: 'true' })).toBe(true);
    expect(() => unsafeLocalReadsRequested({ SETPOINT_UNSAFE_LOCAL_READS: '1', NODE_ENV: 'production' })).toThrow(/refused when NODE_ENV=production/);
  });
});
