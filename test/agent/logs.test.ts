// Container logs: CRI lines, rotation by size keeping N files, --tail, --since, limit, and follow across a
// rotation until the run is finished.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { containerLogDir, logFile, parseLogLine } from '../../src/agent/log-files.js';
import { readContainerLog } from '../../src/agent/log-reader.js';
import { LogWriter } from '../../src/agent/log-writer.js';
import { waitFor } from '../../src/harness/wait.js';
import { readAll } from './runtime-fixture.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'setpoint-logs-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('container logs', () => {
  it('rotates by size, keeps N files, and tails across them', async () => {
    const w = new LogWriter(logFile(dir, 'app', 0), { maxBytes: 400, keep: 3 });
    for (let i = 0; i < 100; i++) w.write(i % 2 ? 'stderr' : 'stdout', Buffer.from(`line ${i}\n`));
    w.close();
    const files = readdirSync(containerLogDir(dir, 'app')).sort();
    expect(files).toEqual(['0.log', '0.log.1', '0.log.2']);
    const tail = await readAll(readContainerLog(dir, 'app', 0, { tailLines: 3 }));
    expect(tail).toBe('line 97\nline 98\nline 99\n');
    const all = await readAll(readContainerLog(dir, 'app', 0));
    const lines = all.trimEnd().split('\n');
    expect(lines.at(-1)).toBe('line 99');
    expect(lines.length).toBeLessThan(100); // the oldest were rotated away
    expect(lines.length).toBeGreaterThan(10);
  });

  it('joins partial lines, filters by time, stamps, and limits bytes', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const w = new LogWriter(logFile(dir, 'app', 0), { maxBytes: 1 << 20, keep: 2 }, () => now);
    w.write('stdout', Buffer.from('old\n'));
    now += 60_000;
    w.write('stdout', Buffer.from('new '));
    w.write('stdout', Buffer.from('line\nunterminated'));
    w.close();
    expect(await readAll(readContainerLog(dir, 'app', 0))).toBe('old\nnew line\nunterminated\n');
    expect(await readAll(readContainerLog(dir, 'app', 0, { sinceMs: now - 1000 }))).toBe('new line\nunterminated\n');
    expect(await readAll(readContainerLog(dir, 'app', 0, { tailLines: 1, timestamps: true }))).toBe('2026-01-01T00:01:00.000000000Z unterminated\n');
    expect(await readAll(readContainerLog(dir, 'app', 0, { limitBytes: 6 }))).toBe('old\nne');
    expect(parseLogLine('2026-01-01T00:00:00.000000000Z stderr P abc')).toMatchObject({ stream: 'stderr', partial: true, text: 'abc' });
  });

  it('cuts an endless line into partial entries, and reads it back whole', async () => {
    const w = new LogWriter(logFile(dir, 'app', 0), { maxBytes: 1 << 20, keep: 2 });
    w.write('stdout', Buffer.alloc(40 * 1024, 'x'));
    w.write('stdout', Buffer.from('\n'));
    w.close();
    const s = await readAll(readContainerLog(dir, 'app', 0, { tailLines: 1 }));
    expect(s).toBe(`${'x'.repeat(40 * 1024)}\n`);
  });

  it('follows new lines across a rotation until the run is finished', async () => {
    const w = new LogWriter(logFile(dir, 'app', 0), { maxBytes: 200, keep: 3 });
    let finished = false;
    const seen: string[] = [];
    const reader = (async () => {
      for await (const chunk of readContainerLog(dir, 'app', 0, { follow: true, finished: () => finished, pollMs: 10 })) seen.push(chunk);
    })();
    for (let i = 0; i < 20; i++) {
      w.write('stdout', Buffer.from(`n${i}\n`));
      // One rotation per poll at most: the follower reads on by the rotated file's name.
      await waitFor(`line ${i} followed`, () => seen.join('').includes(`n${i}\n`));
    }
    w.close();
    finished = true;
    await reader;
    const text = seen.join('');
    // Every line once, in order: the rotations (a file holds four lines) dropped none, duplicated none.
    expect(text).toBe(Array.from({ length: 20 }, (_, i) => `n${i}\n`).join(''));
  });
});
