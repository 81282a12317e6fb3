// Stopping the pods an agent left running (an agent's SIGTERM leaves them for the next agent to adopt):
// the runtime adopts them from the root dir's state files, then kills them at once. For `setpoint up`'s
// Ctrl-C, which stops everything, and for tests that must leave no process behind.
import { existsSync } from 'node:fs';
import { pino } from 'pino';
import { PodRuntime } from './pod-runtime.js';

export async function stopAdoptedPods(root: string): Promise<void> {
  if (!existsSync(root)) return;
  const rt = new PodRuntime({
    root,
    node: { nodeName: 'cleanup', hostIP: '127.0.0.1', allocatable: { cpu: '1', memory: '1Gi' } },
    inputs: { configMap: () => Promise.resolve(undefined), secret: () => Promise.resolve(undefined) },
    log: pino({ level: 'silent' }),
  });
  rt.start();
  await rt.close({ killPods: true, graceSeconds: 0 });
}
