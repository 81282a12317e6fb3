// The agent's status manager on its own: the writes are a function the test answers by hand (each call
// waits until the test settles it), so coalescing, order, retries and flushes are checked step by step,
// with no timing in the assertions.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ApiStatusError } from '../../src/client/api-status-error.js';
import type { PodPhase, PodStatus } from '../../src/agent/pod-types.js';
import { StatusManager } from '../../src/agent/status-manager.js';
import type { PodStatusTarget } from '../../src/agent/status-manager.js';
import { waitFor } from '../../src/harness/wait.js';

interface Call {
  readonly pod: string;
  readonly phase: string | undefined;
  readonly ok: () => void;
  readonly fail: (e: unknown) => void;
}

function manual(): { sm: StatusManager; calls: Call[] } {
  const calls: Call[] = [];
  const sm = new StatusManager({
    write: (pod, status) =>
      new Promise<void>((ok, fail) => {
        calls.push({ pod: pod.name, phase: status.phase, ok, fail });
      }),
    log: pino({ level: 'silent' }),
    retryMs: 1,
    maxRetryMs: 4,
  });
  return { sm, calls };
}

const target = (name: string): PodStatusTarget => ({ uid: `uid-${name}`, namespace: 'default', name });
const st = (phase: PodPhase, extra: Partial<PodStatus> = {}): PodStatus => ({ phase, ...extra });
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));
const notFound = (): ApiStatusError =>
  new ApiStatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'pods "a" not found', reason: 'NotFound', code: 404 });

describe('status manager', () => {
  it('writes each pod in the background, one write in flight per pod, and only the latest status after it', async () => {
    const { sm, calls } = manual();
    sm.set(target('a'), st('Pending'));
    sm.set(target('b'), st('Pending'));
    // Both pods are written at once: b does not wait for a.
    expect(calls.map((c) => `${c.pod}:${c.phase ?? ''}`)).toEqual(['a:Pending', 'b:Pending']);
    // While a's write is in flight, two newer statuses arrive: only the last one is written, after it.
    sm.set(target('a'), st('Running'));
    sm.set(target('a'), st('Running', { podIP: '127.1.0.9' }));
    expect(calls).toHaveLength(2);
    calls[0]?.ok();
    await waitFor('the second write of a', () => calls.length === 3);
    expect(calls[2]?.phase).toBe('Running');
    calls[1]?.ok();
    calls[2]?.ok();
    await sm.flushed('uid-a');
    await sm.flushed('uid-b');
    // Already written: asking again writes nothing, unless the API's copy was changed by someone else.
    sm.set(target('a'), st('Running', { podIP: '127.1.0.9' }));
    await tick();
    expect(calls).toHaveLength(3);
    sm.set(target('a'), st('Running', { podIP: '127.1.0.9' }), true);
    expect(calls).toHaveLength(4);
    calls[3]?.ok();
    await sm.flushed('uid-a');
  });

  it('does not write the status in flight a second time when a sync asks for it again', async () => {
    const { sm, calls } = manual();
    sm.set(target('a'), st('Running'));
    sm.set(target('a'), st('Running'), true);
    calls[0]?.ok();
    await sm.flushed('uid-a');
    expect(calls).toHaveLength(1);
  });

  it('keeps the last status through failures and writes it when the API answers again; flushed() reports the failure', async () => {
    const { sm, calls } = manual();
    sm.set(target('a'), st('Pending'));
    calls[0]?.fail(new Error('connection reset'));
    await expect(sm.flushed('uid-a')).rejects.toThrow('connection reset');
    // A newer status while the retry waits: the retry writes that one.
    sm.set(target('a'), st('Running'));
    await waitFor('the retry', () => calls.length === 2);
    expect(calls[1]?.phase).toBe('Running');
    calls[1]?.fail(new Error('etcdserver: request timed out'));
    await waitFor('the second retry', () => calls.length === 3);
    expect(calls[2]?.phase).toBe('Running');
    calls[2]?.ok();
    await sm.flushed('uid-a');
  });

  it('drops the writes of a pod the API no longer has, and of a pod it was told to forget', async () => {
    const { sm, calls } = manual();
    sm.set(target('a'), st('Pending'));
    sm.set(target('a'), st('Running'));
    calls[0]?.fail(notFound());
    await sm.flushed('uid-a');
    await tick();
    expect(calls).toHaveLength(1);
    sm.set(target('b'), st('Pending'));
    sm.set(target('b'), st('Running'));
    sm.forget('uid-b');
    calls[1]?.ok();
    await sm.flushed('uid-b');
    await tick();
    expect(calls).toHaveLength(2);
  });

  it('stop() cancels a waiting retry', async () => {
    const { sm, calls } = manual();
    sm.set(target('a'), st('Pending'));
    calls[0]?.fail(new Error('connection reset'));
    await expect(sm.flushed('uid-a')).rejects.toThrow();
    await sm.stop();
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toHaveLength(1);
  });
});
