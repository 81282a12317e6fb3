// `setpoint --help` and every subcommand's --help say what each command and flag does, and a store flag
// shows its default as etcd's help does. Walks the real command tree, so a command or flag added later
// without a description fails here.
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { STORE_FLAG_DEFAULTS } from '../../src/server/embed/store-flags.js';
import { STORE_FLAG_HELP } from '../../src/cli/store-flag-help.js';

function walk(cmd: Command, path: string[] = []): { path: string; cmd: Command }[] {
  const here = [...path, cmd.name()];
  return [{ path: here.join(' '), cmd }, ...cmd.commands.flatMap((c) => walk(c, here))];
}

describe('help', () => {
  const program = buildProgram();

  it('describes every command and every flag', () => {
    const undocumented: string[] = [];
    for (const { path, cmd } of walk(program)) {
      if (cmd.description().trim() === '') undocumented.push(`${path}: no description`);
      for (const o of cmd.options) if ((o.description ?? '').trim() === '') undocumented.push(`${path} ${o.flags}: no description`);
    }
    expect(undocumented).toEqual([]);
  });

  it('has a line for every store flag and none for a flag that does not exist', () => {
    expect(Object.keys(STORE_FLAG_HELP).filter((f) => !(f in STORE_FLAG_DEFAULTS))).toEqual([]);
    expect(Object.keys(STORE_FLAG_DEFAULTS).filter((f) => !(f in STORE_FLAG_HELP))).toEqual([]);
  });

  it('prints store flags with what they do and their default', () => {
    const store = program.commands.find((c) => c.name() === 'store');
    const text = store?.helpInformation() ?? '';
    expect(text).toMatch(/--name <value>\s+human-readable name of this member.*\(default: default\)/s);
    expect(text).toMatch(/--heartbeat-interval <value>\s+milliseconds between leader heartbeats \(default: 100\)/);
    expect(text).toMatch(/--client-cert-auth \[bool\]\s+require clients to present a certificate/);
  });
});
