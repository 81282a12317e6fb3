// The node agent's runtime: the pods of this node as local processes under one root directory
// (<root>/pods/<uid>/), with no API server in sight. Its caller hands it pod objects and the inputs they
// reference, and reads back statuses and events; a new runtime on the same root adopts the pods that an
// earlier one left running. The API glue (register the Node, watch pods, post statuses) sits on top.
import { EventEmitter } from 'node:events';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { pino } from 'pino';
import type { Logger } from 'pino';
import { AgentError } from './agent-error.js';
import { Backoff, KUBELET_BACKOFF } from './backoff.js';
import type { BackoffSettings } from './backoff.js';
import type { CgroupSupport } from './cgroups.js';
import { detectCgroups, removePodCgroups } from './cgroups.js';
import { IPAllocator } from './ip-allocator.js';
import type { LogRotation } from './log-files.js';
import { DEFAULT_LOG_ROTATION } from './log-files.js';
import type { LogReadOptions } from './log-reader.js';
import { readContainerLog } from './log-reader.js';
import type { PodEvent } from './pod-events.js';
import type { NodeFacts, PodInputs } from './pod-inputs.js';
import { readPodState } from './pod-state-file.js';
import type { Pod, PodStatus } from './pod-types.js';
import { PodWorker } from './pod-worker.js';
import { removeHostLinks, removePodDir } from './volumes.js';

export interface RuntimeOptions {
  readonly root: string;
  readonly node: NodeFacts;
  readonly inputs: PodInputs;
  readonly backoff?: BackoffSettings;
  readonly rotation?: LogRotation;
  /** How often a pod waiting on a missing ConfigMap/Secret is tried again (default 10 s). */
  readonly resyncMs?: number;
  /** Also link volumes at their real mountPath where possible (default off; see volumes.ts). */
  readonly hostMountPaths?: boolean;
  readonly log?: Logger;
  /** This agent's block of 127.1.0.0/16 (offset, size); the whole of it by default. */
  readonly addressRange?: { readonly offset: number; readonly size: number };
  /** Defaults to what the host offers (detectCgroups). */
  readonly cgroups?: CgroupSupport;
  /** Called with each container process the runtime spawns (tests register them with their reaper). */
  readonly onSpawn?: (child: ChildProcess) => void;
}

interface RuntimeEvents {
  status: [uid: string];
  event: [PodEvent];
  terminated: [uid: string];
}

export class PodRuntime extends EventEmitter<RuntimeEvents> {
  private readonly workers = new Map<string, PodWorker>();
  private readonly ips: IPAllocator;
  private readonly backoff: Backoff;
  private readonly log: Logger;
  readonly cgroups: CgroupSupport;
  private closed = false;

  constructor(private readonly opts: RuntimeOptions) {
    super();
    mkdirSync(join(opts.root, 'pods'), { recursive: true });
    this.ips = new IPAllocator(join(opts.root, 'pod-addresses.json'), opts.addressRange);
    this.backoff = new Backoff(opts.backoff ?? KUBELET_BACKOFF);
    this.log = opts.log ?? pino({ level: 'silent' });
    this.cgroups = opts.cgroups ?? detectCgroups();
  }

  /** Adopts the pods an earlier runtime on this root left behind. */
  start(): void {
    const dir = join(this.opts.root, 'pods');
    for (const uid of readdirSync(dir)) {
      const podDir = join(dir, uid);
      let saved;
      try {
        saved = readPodState(podDir);
      } catch (err) {
        this.log.warn({ err, uid }, 'unreadable pod state: the pod is not adopted');
        continue;
      }
      if (!saved) continue;
      const w = new PodWorker(saved.pod, saved.podIP, this.deps(uid, podDir), saved);
      this.workers.set(uid, w);
      w.kick();
    }
    // Addresses whose pod directory is gone were leaked by a crash between the two: free them.
    for (const owner of this.ips.owners()) if (!this.workers.has(owner) && !existsSync(join(dir, owner))) this.ips.release(owner);
  }

  /** Creates or updates the pod; a pod with a deletionTimestamp is terminated gracefully. */
  syncPod(pod: Pod): void {
    if (this.closed) throw new AgentError('AGENT_STOPPED', 'the runtime is closed');
    const uid = pod.metadata.uid;
    if (!uid || !/^[A-Za-z0-9-]{1,64}$/.test(uid)) throw new AgentError('AGENT_BAD_POD', `pod ${pod.metadata.name ?? ''} has no usable uid`);
    const have = this.workers.get(uid);
    if (have) {
      have.update(pod);
      return;
    }
    if (pod.metadata.deletionTimestamp) return; // never started here: nothing to stop
    const podDir = join(this.opts.root, 'pods', uid);
    const ip = this.ips.allocate(uid);
    const w = new PodWorker(pod, ip, this.deps(uid, podDir));
    this.workers.set(uid, w);
    w.kick();
  }

  /** Stops the pod's containers gracefully (preStop, SIGTERM, SIGKILL after the grace period). */
  async terminatePod(uid: string, graceSeconds?: number): Promise<void> {
    const w = this.workers.get(uid);
    if (!w) return;
    await w.terminate(graceSeconds);
  }

  /** Terminates the pod if needed and removes every trace of it: directory, address, cgroups, links. */
  async removePod(uid: string, graceSeconds?: number): Promise<void> {
    const w = this.workers.get(uid);
    if (!w) return;
    await w.terminate(graceSeconds);
    w.detach();
    this.workers.delete(uid);
    await w.persisted();
    const podDir = join(this.opts.root, 'pods', uid);
    removeHostLinks(w.hostLinkList, podDir);
    removePodCgroups(this.cgroups, uid);
    removePodDir(podDir);
    this.ips.release(uid);
  }

  status(uid: string): PodStatus | undefined {
    return this.workers.get(uid)?.status();
  }

  /** Resolves once the pod's state file holds what was last saved (before its status is reported). */
  async persisted(uid: string): Promise<void> {
    await this.workers.get(uid)?.persisted();
  }

  uids(): string[] {
    return [...this.workers.keys()];
  }

  pod(uid: string): Pod | undefined {
    return this.workers.get(uid)?.pod;
  }

  isSyncing(uid: string): boolean {
    return this.workers.get(uid)?.isSyncing ?? false;
  }

  isTerminated(uid: string): boolean {
    return this.workers.get(uid)?.isTerminated ?? false;
  }

  /** Running container pids by name (tests kill them; the node counts them). */
  pids(uid: string): Record<string, number> {
    return this.workers.get(uid)?.pids() ?? {};
  }

  /** A container's log, as `kubectl logs` asks for it; follow ends when the run ends. */
  logs(uid: string, container: string, opts: LogReadOptions & { previous?: boolean } = {}): AsyncGenerator<string> {
    const w = this.workers.get(uid);
    if (!w) throw new AgentError('AGENT_LOG_NOT_FOUND', `pod ${uid} is not on this node`);
    const names = w.containerNames();
    if (!names.includes(container)) {
      throw new AgentError('AGENT_LOG_NOT_FOUND', `container ${container} is not valid for pod ${w.pod.metadata.name ?? ''}`);
    }
    const restart = w.logRestart(container, opts.previous ?? false);
    if (restart === undefined) {
      throw new AgentError(
        'AGENT_LOG_NOT_FOUND',
        opts.previous
          ? `previous terminated container "${container}" in pod "${w.pod.metadata.name ?? ''}" not found`
          : `container "${container}" in pod "${w.pod.metadata.name ?? ''}" is waiting to start: ContainerCreating`,
      );
    }
    const current = w.logRestart(container, false);
    const finished = (): boolean => opts.previous === true || w.logRestart(container, false) !== current || !w.isContainerRunning(container);
    return readContainerLog(join(this.opts.root, 'pods', uid), container, restart, { ...opts, finished });
  }

  /**
   * Closes the runtime. By default the processes keep running for the next agent to adopt (an agent
   * restart must not restart pods); killPods terminates every pod first (the node is being drained).
   */
  async close(o: { killPods?: boolean; graceSeconds?: number } = {}): Promise<void> {
    this.closed = true;
    if (o.killPods) await Promise.all([...this.workers.keys()].map((uid) => this.removePod(uid, o.graceSeconds)));
    for (const w of this.workers.values()) w.detach();
    await Promise.all([...this.workers.values()].map((w) => w.persisted()));
    this.workers.clear();
  }

  private deps(uid: string, podDir: string): ConstructorParameters<typeof PodWorker>[2] {
    return {
      podDir,
      node: this.opts.node,
      inputs: this.opts.inputs,
      backoff: this.backoff,
      rotation: this.opts.rotation ?? DEFAULT_LOG_ROTATION,
      cgroups: this.cgroups,
      hostMountPaths: this.opts.hostMountPaths ?? false,
      resyncMs: this.opts.resyncMs ?? 10_000,
      log: this.log.child({ pod: uid }),
      baseEnv: { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' },
      onStatus: () => this.emit('status', uid),
      onEvent: (e) => this.emit('event', e),
      onSpawn: this.opts.onSpawn,
    };
  }
}
