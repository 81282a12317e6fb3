// `setpoint agent`: one worker node on the API. It registers its Node, renews its Lease, posts node
// status, runs the pods bound to it through the runtime (src/agent/pod-runtime.ts) and reports them back
// (pod-sync.ts), and serves their logs on its HTTPS port (log-server.ts). Stopping it leaves the pods
// running: the next agent on the same --root-dir adopts them.
import { mkdirSync } from 'node:fs';
import type { Logger } from 'pino';
import { ApiEventRecorder } from '../client/event-recorder.js';
import { SharedInformerFactory } from '../client/informer-factory.js';
import type { RestClient } from '../client/rest-client.js';
import type { BackoffSettings } from './backoff.js';
import { apiPodInputs } from './api-pod-inputs.js';
import { hostFacts } from './host-facts.js';
import { LogServer } from './log-server.js';
import { NodeLease } from './node-lease.js';
import type { NodeSettings } from './node-object.js';
import { NodeReporter } from './node-reporter.js';
import { PodRuntime } from './pod-runtime.js';
import { PodSync } from './pod-sync.js';

export interface AgentOptions extends NodeSettings {
  readonly rest: RestClient;
  readonly nodeName: string;
  readonly rootDir: string;
  /** The node's InternalIP and every pod's hostIP (--node-ip). */
  readonly nodeIP: string;
  /** Where the HTTPS port listens (--address). */
  readonly address: string;
  /** --port; 0 picks a free one (reported in the Node's daemonEndpoints). */
  readonly port: number;
  readonly statusUpdateEveryMs: number;
  readonly backoff?: BackoffSettings;
  /** The pods' block of 127.1.0.0/16 (--pod-cidr). */
  readonly addressRange?: { readonly offset: number; readonly size: number };
  /** Also link volumes at their real mountPath where that path is free (--host-mount-paths; see volumes.ts). */
  readonly hostMountPaths?: boolean;
  readonly serving: { readonly certPem: string; readonly keyPem: string };
  readonly clientCaPem?: string;
  readonly log: Logger;
}

export class Agent {
  private readonly abort = new AbortController();
  private readonly runtime: PodRuntime;
  private readonly recorder: ApiEventRecorder;
  private readonly factory: SharedInformerFactory;
  private readonly logs: LogServer;
  private reporter: NodeReporter | undefined;
  private sync: PodSync | undefined;
  private timers: NodeJS.Timeout[] = [];
  port = 0;

  constructor(private readonly o: AgentOptions) {
    mkdirSync(o.rootDir, { recursive: true });
    const probe = hostFacts(o.nodeName, o.nodeIP, o.rootDir, { cpu: false, memory: false, reason: '' }, o.maxPods);
    this.runtime = new PodRuntime({
      root: o.rootDir,
      node: { nodeName: o.nodeName, hostIP: o.nodeIP, allocatable: { cpu: probe.allocatable['cpu'] ?? '1', memory: probe.allocatable['memory'] ?? '0' } },
      inputs: apiPodInputs(o.rest),
      log: o.log.child({ component: 'runtime' }),
      ...(o.backoff ? { backoff: o.backoff } : {}),
      ...(o.addressRange ? { addressRange: o.addressRange } : {}),
      hostMountPaths: o.hostMountPaths ?? false,
    });
    this.recorder = new ApiEventRecorder(o.rest, { component: 'kubelet', host: o.nodeName }, { log: o.log });
    this.factory = new SharedInformerFactory(o.rest, { log: o.log });
    this.logs = new LogServer({
      address: o.address,
      port: o.port,
      certPem: o.serving.certPem,
      keyPem: o.serving.keyPem,
      ...(o.clientCaPem !== undefined ? { clientCaPem: o.clientCaPem } : {}),
      runtime: this.runtime,
      log: o.log.child({ component: 'log-server' }),
    });
  }

  async start(): Promise<void> {
    const o = this.o;
    this.runtime.start();
    this.port = await this.logs.start();
    const reporter = new NodeReporter(
      o.rest,
      { name: o.nodeName, labels: o.labels, taints: o.taints, port: this.port },
      () => hostFacts(o.nodeName, o.nodeIP, o.rootDir, this.runtime.cgroups, o.maxPods),
      o.log,
    );
    this.reporter = reporter;
    const lease = new NodeLease(o.rest, o.nodeName, o.leaseDurationSeconds, o.log, () => reporter.uid);
    // Both loops retry on their own ticks: an API server that is not up yet is waited for, not fatal.
    await reporter.maybePost(o.statusUpdateEveryMs);
    if (reporter.registered) await lease.renew();
    this.every(Math.min(o.statusUpdateEveryMs, 1000), () => reporter.maybePost(o.statusUpdateEveryMs).then(() => undefined));
    this.every(lease.renewIntervalMs, async () => {
      if (reporter.registered) await lease.renew();
    });
    this.sync = new PodSync({ rest: o.rest, factory: this.factory, runtime: this.runtime, nodeName: o.nodeName, recorder: this.recorder, log: o.log.child({ component: 'pod-sync' }) });
    this.factory.start(this.abort.signal);
    void this.sync.run(this.abort.signal);
    o.log.info({ node: o.nodeName, port: this.port, root: o.rootDir }, 'agent started');
  }

  /** A timer that never overlaps itself and never throws. */
  private every(ms: number, fn: () => Promise<void>): void {
    let busy = false;
    const t = setInterval(() => {
      if (busy) return;
      busy = true;
      fn()
        .catch((e: unknown) => this.o.log.warn({ err: e }, 'agent loop failed'))
        .finally(() => (busy = false));
    }, ms);
    this.timers.push(t);
  }

  /** Pids of a pod's running containers (tests). */
  pids(uid: string): Record<string, number> {
    return this.runtime.pids(uid);
  }

  /** Stops the loops and the port; the pods keep running for the next agent to adopt. */
  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.abort.abort();
    await this.sync?.stop();
    await this.logs.stop();
    await this.factory.stopped();
    await this.recorder.flush();
    await this.runtime.close();
  }
}
