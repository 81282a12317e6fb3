// V8's heap flags for a member are written twice, because V8 reads them only at start-up: in
// MEMBER_NODE_FLAGS for the members Setpoint starts itself, and in the shebang of src/cli/main.ts for
// `setpoint store` run directly. The two must say the same.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MEMBER_NODE_FLAGS } from '../../src/cli/member-node-flags.js';

describe('member node flags', () => {
  it('are the flags of the setpoint command\'s shebang', () => {
    const shebang = readFileSync(new URL('../../src/cli/main.ts', import.meta.url), 'utf8').split('\n')[0] as string;
    expect(shebang).toBe(`#!/usr/bin/env -S node ${MEMBER_NODE_FLAGS.join(' ')}`);
  });
});
