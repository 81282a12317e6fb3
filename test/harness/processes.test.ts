// The process harness's own parts, with real processes: a child never outlives its starter (however the
// starter dies), a managed process's log, signals and waits, and the polling helper's messages.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ManagedProcess } from '../../src/harness/managed-process.js';
import { freePort } from '../../src/harness/free-port.js';
import { seedFrom } from '../../src/harness/seed.js';
import { waitFor } from '../../src/harness/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'setpoint-harness-'));
const started: ManagedProcess[] = [];
afterEach(async () => {
  for (const p of started.splice(0)) await p.kill('SIGKILL');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function node(name: string, script: string, output: ConstructorParameters<typeof ManagedProcess>[2] = {}): ManagedProcess {
  const p = new ManagedProcess(name, { bin: process.execPath, args: ['-e', script] }, output);
  started.push(p);
  return p;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('children: nothing outlives its starter', () => {
  it('kills a registered child when its starter is SIGKILLed (no exit hook runs then)', async () => {
    const fixture = fileURLToPath(new URL('./fixtures/orphan-parent.ts', import.meta.url));
    let pids: { parent: number; child: number } | undefined;
    const parent = new ManagedProcess('orphan-parent', { bin: process.execPath, args: ['--import', 'tsx', fixture] }, {
      onLine: (line, stream) => {
        if (stream === 'stdout') pids = JSON.parse(line) as { parent: number; child: number };
      },
    });
    started.push(parent);
    parent.start();
    const { child } = await parent.waitReady('its pids', () => pids);
    expect(alive(child)).toBe(true);
    await parent.kill('SIGKILL');
    await waitFor(`the orphaned child ${child} to be killed by the reaper`, () => !alive(child), { timeoutMs: 10_000 });
  });
});

describe('a managed process', () => {
  it('appends its output to its log file, and tells what came after a mark', async () => {
    const logFile = join(dir, 'echo.log');
    const p = node('echo', "console.log('one'); console.error('two'); setInterval(() => {}, 1000)", { logFile });
    p.start();
    await p.waitReady('both lines', () => p.logSince().includes('two'));
    const mark = p.logMark();
    expect(await p.kill('SIGTERM')).toEqual({ code: null, signal: 'SIGTERM' });
    p.start();
    await p.waitReady('both lines again', () => p.logSince(mark).includes('two'));
    expect(readFileSync(logFile, 'utf8')).toBe('one\ntwo\none\ntwo\n');
    expect(p.logged('nothing')).toEqual([]);
  });

  it('fails a wait at once when the process exits first, with the end of its log', async () => {
    const p = node('doomed', "console.error('cannot start: bad flag'); process.exit(3)", { logFile: join(dir, 'doomed.log') });
    p.start();
    const t0 = performance.now();
    await expect(p.waitReady('serving', () => false, 60_000)).rejects.toThrow(/doomed exited \(3\) before serving:\ncannot start: bad flag/);
    expect(performance.now() - t0).toBeLessThan(30_000);
  });

  it('pauses and resumes (SIGSTOP/SIGCONT), and a paused process still dies of SIGTERM', async () => {
    const lines: string[] = [];
    const p = node('ticker', "let i = 0; setInterval(() => console.log(i++), 20); process.on('SIGTERM', () => { console.log('bye'); process.exit(0); })", {
      onLine: (l) => lines.push(l),
    });
    p.start();
    await waitFor('ticks', () => lines.length > 2);
    p.pause();
    expect(p.isPaused).toBe(true);
    p.resume();
    const n = lines.length;
    await waitFor('ticks after SIGCONT', () => lines.length > n + 2);
    p.pause();
    // SIGTERM to a stopped process waits for SIGCONT: kill() sends it, so the handler runs.
    expect(await p.kill('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(lines.at(-1)).toBe('bye');
  });

  it('follows a SIGTERM that is ignored with SIGKILL after the grace period', async () => {
    const p = node('stubborn', "process.on('SIGTERM', () => {}); console.log('up'); setInterval(() => {}, 1000)", { capture: true });
    p.start();
    await p.waitReady('up', () => p.stdout.includes('up'));
    expect(await p.kill('SIGTERM', 300)).toEqual({ code: null, signal: 'SIGKILL' });
  });

  it('reports an exit nobody asked for to its listeners, and one it was asked for as asked', async () => {
    const seen: [number | null, boolean][] = [];
    const p = node('short', "setTimeout(() => process.exit(5), 50)");
    p.onExit((e, asked) => seen.push([e.code, asked]));
    p.start();
    expect(await p.exited()).toEqual({ code: 5, signal: null });
    p.command = { bin: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] };
    p.start();
    await p.kill('SIGKILL');
    expect(seen).toEqual([[5, false], [null, true]]);
  });
});

describe('waiting and ports', () => {
  it('says what it waited for, for how long, and in what state it gave up', async () => {
    let n = 0;
    await expect(waitFor('the answer', () => (n++, undefined), { timeoutMs: 100, intervalMs: 10, detail: () => `asked ${n} times` })).rejects.toThrow(
      /^timed out after 100 ms waiting for the answer: asked \d+ times$/,
    );
    expect(await waitFor('a value', () => (n > 0 ? 42 : undefined))).toBe(42);
    await expect(waitFor('a probe that knows it never will', () => Promise.reject(new Error('it exited')))).rejects.toThrow('it exited');
  });

  it('hands out ports nobody listens on, never the same one twice', async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    expect(new Set(ports).size).toBe(20);
    const first = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0];
    if (existsSync('/proc/sys/net/ipv4/ip_local_port_range')) for (const p of ports) expect(p).toBeLessThan(Number(first));
  });

  it('takes the seed from its variable, or draws one and says how to repeat it', () => {
    expect(seedFrom('X_SEED', { X_SEED: '1234' })).toEqual({ value: 1234, line: 'seed=1234 (X_SEED=1234 to repeat)' });
    const drawn = seedFrom('X_SEED', {});
    expect(drawn.line).toBe(`seed=${drawn.value} (X_SEED=${drawn.value} to repeat)`);
    expect(() => seedFrom('X_SEED', { X_SEED: 'soon' })).toThrow('X_SEED=soon is not a seed');
  });
});
