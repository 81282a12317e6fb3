// A PodRuntime on a temp directory with in-memory ConfigMaps and Secrets, for tests that run real
// processes. Every pod it started is killed and the directory removed in cleanup(), also on failure.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerChild } from '../../src/harness/children.js';
import { waitFor } from '../../src/harness/wait.js';
import type { PodEvent } from '../../src/agent/pod-events.js';
import type { ConfigMapData, NodeFacts, SecretData } from '../../src/agent/pod-inputs.js';
import type { RuntimeOptions } from '../../src/agent/pod-runtime.js';
import { PodRuntime } from '../../src/agent/pod-runtime.js';
import type { Container, ContainerStatus, Pod, PodSpec } from '../../src/agent/pod-types.js';

export const node: NodeFacts = { nodeName: 'node-test', hostIP: '127.0.0.1', allocatable: { cpu: '2', memory: '4Gi' } };

export class Fixture {
  readonly root = mkdtempSync(join(tmpdir(), 'setpoint-agent-'));
  readonly configMaps = new Map<string, ConfigMapData>();
  readonly secrets = new Map<string, SecretData>();
  readonly events: PodEvent[] = [];
  readonly runtimes: PodRuntime[] = [];
  // Each fixture takes its own block of addresses so test files running in parallel never share one.
  readonly range = { offset: Math.floor(Math.random() * 15) * 4096 + 1 + Math.floor(Math.random() * 1000), size: 64 };

  runtime(o: Partial<RuntimeOptions> = {}): PodRuntime {
    const rt = new PodRuntime({
      root: this.root,
      node,
      inputs: {
        configMap: (ns, name) => Promise.resolve(this.configMaps.get(`${ns}/${name}`)),
        secret: (ns, name) => Promise.resolve(this.secrets.get(`${ns}/${name}`)),
      },
      backoff: { initialMs: 300, maxMs: 2400, resetMs: 60_000 },
      resyncMs: 200,
      addressRange: this.range,
      onSpawn: registerChild,
      ...o,
    });
    rt.on('event', (e) => this.events.push(e));
    this.runtimes.push(rt);
    rt.start();
    return rt;
  }

  async cleanup(): Promise<void> {
    for (const rt of this.runtimes) await rt.close({ killPods: true, graceSeconds: 0 }).catch(() => undefined);
    rmSync(this.root, { recursive: true, force: true });
  }
}

let n = 0;
export function pod(name: string, spec: Partial<PodSpec> & { containers: Container[] }): Pod {
  n++;
  return {
    metadata: { name, namespace: 'default', uid: `uid-${process.pid}-${n}-${name}`, labels: { app: name } },
    spec: { restartPolicy: 'Always', terminationGracePeriodSeconds: 1, ...spec },
  };
}

export function containerStatus(rt: PodRuntime, p: Pod, name?: string): ContainerStatus | undefined {
  const st = rt.status(p.metadata.uid ?? '');
  return [...(st?.containerStatuses ?? []), ...(st?.initContainerStatuses ?? [])].find((c) => name === undefined || c.name === name);
}

export function waitContainer(rt: PodRuntime, p: Pod, what: string, ok: (c: ContainerStatus) => boolean, name?: string, timeoutMs = 30_000): Promise<ContainerStatus> {
  return waitFor(what, () => {
    const c = containerStatus(rt, p, name);
    return c && ok(c) ? c : undefined;
  }, { timeoutMs, detail: () => JSON.stringify(rt.status(p.metadata.uid ?? '')) });
}

export async function readAll(it: AsyncIterable<string>): Promise<string> {
  let s = '';
  for await (const chunk of it) s += chunk;
  return s;
}
