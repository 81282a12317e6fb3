// V8's heap flags for a member are written twice, because V8 reads them only at start-up: in
// MEMBER_NODE_FLAGS for the members Setpoint starts itself, and in the shebang of src/cli/main.ts for
// `setpoint store` run directly. The two must say the same.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MEMBER_NODE_FLAGS, memberAllocatorEnv } from '../../src/cli/member-node-flags.js';

describe('member node flags', () => {
  it('are the flags of the setpoint command\'s shebang', () => {
    const shebang = readFileSync(new URL('../../src/cli/main.ts', import.meta.url), 'utf8').split('\n')[0] as string;
    expect(shebang).toBe(`#!/usr/bin/env -S node ${MEMBER_NODE_FLAGS.join(' ')}`);
  });
});

describe('member allocator', () => {
  const debian = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2';
  const has = (...paths: string[]) => (p: string) => paths.includes(p);

  it('preloads jemalloc where the system has it, and nothing where it does not', () => {
    expect(memberAllocatorEnv({}, has(debian))).toEqual({ LD_PRELOAD: debian });
    expect(memberAllocatorEnv({ SETPOINT_MEMBER_MALLOC: 'jemalloc' }, has('/usr/lib64/libjemalloc.so.2'))).toEqual({ LD_PRELOAD: '/usr/lib64/libjemalloc.so.2' });
    expect(memberAllocatorEnv({}, has())).toEqual({});
  });

  it('keeps the system allocator when asked, and an LD_PRELOAD already set', () => {
    expect(memberAllocatorEnv({ SETPOINT_MEMBER_MALLOC: 'system' }, has(debian))).toEqual({});
    expect(memberAllocatorEnv({ LD_PRELOAD: '/opt/other.so' }, has(debian))).toEqual({});
  });

  it('takes the path of another allocator, and refuses one that is not there', () => {
    expect(memberAllocatorEnv({ SETPOINT_MEMBER_MALLOC: '/opt/tcmalloc.so' }, has('/opt/tcmalloc.so'))).toEqual({ LD_PRELOAD: '/opt/tcmalloc.so' });
    expect(() => memberAllocatorEnv({ SETPOINT_MEMBER_MALLOC: '/nope.so' }, has())).toThrow(
      'SETPOINT_MEMBER_MALLOC=/nope.so: no such file (use jemalloc, system, or the path of an allocator\'s shared library)',
    );
  });
});
