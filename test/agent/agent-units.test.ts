// The agent's pure pieces: back-off arithmetic, the address allocator, $(VAR) expansion, pod phase and
// conditions, host facts, cgroup detection on this host.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Backoff, goDuration } from '../../src/agent/backoff.js';
import { detectCgroups } from '../../src/agent/cgroups.js';
import { expandVars } from '../../src/agent/container-env.js';
import { hostFacts } from '../../src/agent/host-facts.js';
import { IPAllocator } from '../../src/agent/ip-allocator.js';
import { podConditions, podPhase } from '../../src/agent/pod-phase.js';
import type { ContainerStatus, PodSpec } from '../../src/agent/pod-types.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'setpoint-units-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('back-off', () => {
  it('is immediate first, then doubles from the initial delay to the cap, and resets after the window', () => {
    const b = new Backoff({ initialMs: 10_000, maxMs: 300_000, resetMs: 600_000 });
    expect(b.remaining('k', 0, 0)).toBe(0);
    const delays: number[] = [];
    let t = 0;
    for (let i = 0; i < 8; i++) {
      b.next('k', t);
      delays.push(b.delay('k') ?? 0);
      t += 1000;
    }
    expect(delays).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000]);
    expect(b.remaining('k', t, t + 1000)).toBe(299_000);
    // It ran past the reset window since the last restart: no wait, and the next delay is the initial one.
    expect(b.remaining('k', t + 700_000, t + 700_000)).toBe(0);
    b.next('k', t + 700_000);
    expect(b.delay('k')).toBe(10_000);
    expect([goDuration(300), goDuration(10_000), goDuration(1200), goDuration(300_000)]).toEqual(['300ms', '10s', '1.2s', '5m0s']);
  });
});

describe('IPAllocator', () => {
  it('persists, is idempotent per owner, reuses freed addresses last, and says when it is exhausted', () => {
    const f = join(dir, 'a.json');
    const a = new IPAllocator(f, { offset: 10, size: 3 });
    expect(a.allocate('p1')).toBe('127.1.0.11');
    expect(a.allocate('p1')).toBe('127.1.0.11');
    expect(a.allocate('p2')).toBe('127.1.0.12');
    a.release('p1');
    expect(a.allocate('p3')).toBe('127.1.0.13');
    expect(a.allocate('p4')).toBe('127.1.0.11');
    expect(() => a.allocate('p5')).toThrow(expect.objectContaining({ code: 'AGENT_IP_EXHAUSTED' }));
    const b = new IPAllocator(f, { offset: 10, size: 3 });
    expect(b.lookup('p2')).toBe('127.1.0.12');
    expect(b.owners().sort()).toEqual(['p2', 'p3', 'p4']);
  });
});

describe('$(VAR) expansion', () => {
  it('expands known names, keeps unknown ones, and unescapes $$', () => {
    const vars = new Map([['A', 'x'], ['B', 'y']]);
    expect(expandVars('$(A)-$(B)-$(C)-$$(A)-$', vars)).toBe('x-y-$(C)-$(A)-$');
  });
});

const running = (name: string, ready = true): ContainerStatus => ({ name, state: { running: {} }, lastState: {}, ready, restartCount: 0, image: '', imageID: '' });
const exited = (name: string, exitCode: number): ContainerStatus => ({ name, state: { terminated: { exitCode } }, lastState: {}, ready: false, restartCount: 0, image: '', imageID: '' });
const backingOff = (name: string): ContainerStatus => ({ name, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1 } }, ready: false, restartCount: 2, image: '', imageID: '' });

describe('pod phase and conditions', () => {
  const spec = (restartPolicy: NonNullable<PodSpec['restartPolicy']>, init = false): PodSpec => ({
    restartPolicy,
    containers: [{ name: 'a' }, { name: 'b' }],
    ...(init ? { initContainers: [{ name: 'i' }] } : {}),
  });
  it('follows kubelet getPhase', () => {
    expect(podPhase(spec('Always'), [], [running('a'), running('b')])).toBe('Running');
    expect(podPhase(spec('Always'), [], [running('a'), backingOff('b')])).toBe('Running');
    expect(podPhase(spec('Never'), [], [exited('a', 0), exited('b', 0)])).toBe('Succeeded');
    expect(podPhase(spec('Never'), [], [exited('a', 0), exited('b', 1)])).toBe('Failed');
    expect(podPhase(spec('OnFailure'), [], [exited('a', 0), exited('b', 1)])).toBe('Running');
    expect(podPhase(spec('Always'), [], [running('a')])).toBe('Pending');
    expect(podPhase(spec('Never', true), [exited('i', 1)], [])).toBe('Failed');
    expect(podPhase(spec('Always', true), [running('i')], [])).toBe('Pending');
  });
  it('names unready containers and keeps transition times while nothing changes', () => {
    const s = spec('Always');
    const c1 = podConditions(s, 'Running', [], [running('a'), running('b', false)], [], 't1');
    expect(c1.map((c) => c.type)).toEqual(['Initialized', 'Ready', 'ContainersReady', 'PodScheduled']);
    expect(c1.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [b]', lastTransitionTime: 't1' });
    const c2 = podConditions(s, 'Running', [], [running('a'), running('b', false)], c1, 't2');
    expect(c2.find((c) => c.type === 'Ready')?.lastTransitionTime).toBe('t1');
    const c3 = podConditions(s, 'Running', [], [running('a'), running('b')], c2, 't3');
    expect(c3.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', lastTransitionTime: 't3' });
  });
});

describe('host facts', () => {
  it('reports capacity, the well-known labels and the four conditions', () => {
    const f = hostFacts('node-1', '127.0.0.1', dir, detectCgroups());
    expect(f.capacity.pods).toBe('110');
    expect(Number(f.capacity.cpu)).toBeGreaterThan(0);
    expect(f.capacity.memory).toMatch(/^\d+Ki$/);
    expect(f.labels['kubernetes.io/hostname']).toBe('node-1');
    expect(f.labels['kubernetes.io/os']).toBe('linux');
    expect(f.conditions.map((c) => c.type).sort()).toEqual(['DiskPressure', 'MemoryPressure', 'PIDPressure', 'Ready']);
    expect(f.addresses[0]).toEqual({ type: 'InternalIP', address: '127.0.0.1' });
  });
  it('says why limits cannot be enforced when cgroup v2 lacks the controllers', () => {
    const cg = detectCgroups();
    // Either the host can enforce both, or it says why not (this sandbox: cgroup v2 without memory/cpu).
    if (cg.memory && cg.cpu) expect(cg.reason).toBe('');
    else expect(cg.reason).not.toBe('');
  });
});
