// `setpoint up`'s port flags: three ports each, a bad list is one line naming the flag and exit 2, before
// anything starts (the data dir stays empty).
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../src/harness/command.js';
import { setpointMain } from '../../src/harness/setpoint-main.js';

describe('setpoint up: port flags', () => {
  const dir = mkdtempSync(join(tmpdir(), 'setpoint-up-flags-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['--api-ports=6443,16443', 'setpoint up: invalid argument "6443,16443" for "--api-ports" flag: must be 3 comma-separated ports from 1 to 65535'],
    ['--client-ports=1,2,x', 'setpoint up: invalid argument "1,2,x" for "--client-ports" flag: must be 3 comma-separated ports from 1 to 65535'],
    ['--peer-ports=0,1,2', 'setpoint up: invalid argument "0,1,2" for "--peer-ports" flag: must be 3 comma-separated ports from 1 to 65535'],
    ['--agent-ports=0,0,70000', 'setpoint up: invalid argument "0,0,70000" for "--agent-ports" flag: must be 3 comma-separated ports from 0 to 65535'],
  ])('%s', async (flag, message) => {
    const dataDir = join(dir, flag.replace(/\W/g, '_'));
    const r = await runCommand({ bin: process.execPath, args: [setpointMain(), 'up', `--data-dir=${dataDir}`, flag] });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 2, stderr: `${message}\n` });
    expect(existsSync(dataDir) ? readdirSync(dataDir) : []).toEqual([]);
  });
});
