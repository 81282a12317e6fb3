// One pod on this node, kept converging the way kubelet's pod worker does: a level-based sync (set up the
// sandbox and volumes, run init containers one by one to success, then keep every container running as
// the restart policy says, within CrashLoopBackOff), kicked by whatever changed — a new pod object, an
// exit, a probe, a back-off timer — and a graceful termination when the pod is deleted. Its status is
// computed from the containers' state, never stored separately.
import { existsSync, mkdirSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';
import { Quantity } from '../api/quantity.js';
import type { Backoff } from './backoff.js';
import { goDuration } from './backoff.js';
import type { CgroupSupport } from './cgroups.js';
import { containerCgroup, oomKills } from './cgroups.js';
import { containerArgv, resolveContainerEnv } from './container-env.js';
import type { ContainerRecord, ExitInfo } from './container-process.js';
import { ContainerProcess, lookPath } from './container-process.js';
import { ContainerProber } from './container-prober.js';
import type { ProbeKind } from './container-prober.js';
import { execCommand } from './exec-command.js';
import type { LogRotation } from './log-files.js';
import type { PodEvent } from './pod-events.js';
import type { NodeFacts, PodInputs } from './pod-inputs.js';
import { ContainerConfigError } from './pod-inputs.js';
import { podConditions, podPhase } from './pod-phase.js';
import type { ContainerSlotState, PodStateFile } from './pod-state-file.js';
import { writePodState } from './pod-state-file.js';
import type { Container, ContainerStateTerminated, ContainerStateWaiting, ContainerStatus, Pod, PodCondition, PodPhase, PodStatus } from './pod-types.js';
import { podFullName } from './pod-types.js';
import { runProbe } from './probe.js';
import { containerFilesystem, materializeVolumes, VolumeError } from './volumes.js';

/** kubelet never gives a container less than this between SIGTERM and SIGKILL (minimumGracePeriodInSeconds). */
const MIN_GRACE_MS = 2000;

export interface PodWorkerDeps {
  readonly podDir: string;
  readonly node: NodeFacts;
  readonly inputs: PodInputs;
  readonly backoff: Backoff;
  readonly rotation: LogRotation;
  readonly cgroups: CgroupSupport;
  readonly hostMountPaths: boolean;
  /** How often a pod that waits on something outside (a ConfigMap, a Secret) is synced again. */
  readonly resyncMs: number;
  readonly log: Logger;
  readonly baseEnv: Record<string, string>;
  readonly onStatus: () => void;
  readonly onEvent: (e: PodEvent) => void;
  readonly onSpawn?: ((child: ChildProcess) => void) | undefined;
}

interface Slot {
  readonly spec: Container;
  readonly init: boolean;
  /** Runs started so far (a start that failed counts: kubelet counts it as a restart too). */
  runs: number;
  proc?: ContainerProcess | undefined;
  record?: ContainerRecord | undefined;
  prober?: ContainerProber | undefined;
  cgroup?: string | undefined;
  lastTerminated?: ContainerStateTerminated | undefined;
  prevTerminated?: ContainerStateTerminated | undefined;
  /** Why it is not running when that is not a termination: a config error, CrashLoopBackOff, … */
  waiting?: ContainerStateWaiting | undefined;
  /** The last run's finish in ms (status times are whole seconds; back-off needs better). */
  finishedMs?: number | undefined;
  /** Set while the agent is stopping it, so an exit is not taken for a crash that needs a restart now. */
  stopping: boolean;
  env?: Record<string, string> | undefined;
  cwd?: string | undefined;
}

export class PodWorker {
  pod: Pod;
  readonly uid: string;
  private readonly slots = new Map<string, Slot>();
  private readonly hostLinks = new Set<string>();
  private volumesReady = false;
  private lastVolumeError = '';
  private syncing = false;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private terminating: Promise<void> | undefined;
  private terminated = false;
  private closed = false;
  private conditions: PodCondition[] = [];
  private readonly startTime: string;
  /** What the state file holds or is being given (see save()), the state waiting to be written, the writer. */
  private savedKey = '';
  private nextSave: PodStateFile | undefined;
  private saving: Promise<void> | undefined;

  constructor(
    pod: Pod,
    readonly podIP: string,
    private readonly deps: PodWorkerDeps,
    saved?: PodStateFile,
  ) {
    this.pod = pod;
    this.uid = pod.metadata.uid ?? '';
    this.startTime = saved?.startTime ?? new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    this.conditions = pod.status?.conditions?.filter((c) => c.type === 'PodScheduled') ?? [];
    for (const c of pod.spec.initContainers ?? []) this.slots.set(c.name, { spec: c, init: true, runs: 0, stopping: false });
    for (const c of pod.spec.containers) this.slots.set(c.name, { spec: c, init: false, runs: 0, stopping: false });
    mkdirSync(deps.podDir, { recursive: true });
    if (saved) this.restore(saved);
  }

  // ---- adoption ---------------------------------------------------------------------------------------

  private restore(saved: PodStateFile): void {
    for (const l of saved.hostLinks) this.hostLinks.add(l);
    for (const [name, st] of Object.entries(saved.containers)) {
      const slot = this.slots.get(name);
      if (!slot) continue;
      slot.runs = st.runs;
      slot.lastTerminated = st.lastTerminated;
      slot.prevTerminated = st.prevTerminated;
      if (st.backoff) this.deps.backoff.restore(this.key(slot), st.backoff);
      if (st.current) {
        const cp = ContainerProcess.adopt(st.current, this.runDir(), this.deps.podDir, name, this.deps.rotation);
        slot.proc = cp;
        slot.record = st.current;
        // The environment is rebuilt for probes and hooks; the running process keeps the one it had.
        this.watchRun(slot, cp, Date.now() - st.current.startedAt);
        this.deps.log.info({ pod: this.pod.metadata.name, container: name, pid: st.current.pid }, 'adopted container');
      }
    }
    this.volumesReady = true;
  }

  /**
   * Records the pod's state for the next agent, off the event loop: only when it changed (the pod's
   * status and resourceVersion, which our own status writes change, are left out of the comparison), and
   * with one write in flight, the latest state waiting behind it.
   */
  private save(): void {
    if (this.closed) return;
    const containers: Record<string, ContainerSlotState> = {};
    for (const [name, s] of this.slots) {
      const st: ContainerSlotState = { runs: s.runs };
      if (s.proc?.running && s.record) st.current = s.record;
      if (s.lastTerminated) st.lastTerminated = s.lastTerminated;
      if (s.prevTerminated) st.prevTerminated = s.prevTerminated;
      const b = this.deps.backoff.snapshot(this.key(s));
      if (b) st.backoff = b;
      containers[name] = st;
    }
    const state: PodStateFile = { version: 1, pod: this.pod, podIP: this.podIP, startTime: this.startTime, hostLinks: [...this.hostLinks], containers };
    const { resourceVersion: _rv, managedFields: _mf, ...meta } = this.pod.metadata;
    const key = JSON.stringify({ ...state, pod: { metadata: meta, spec: this.pod.spec } });
    if (key === this.savedKey) return;
    this.savedKey = key;
    this.nextSave = state;
    this.saving ??= this.writeSaves().finally(() => (this.saving = undefined));
  }

  private async writeSaves(): Promise<void> {
    for (let s = this.nextSave; s !== undefined; s = this.nextSave) {
      this.nextSave = undefined;
      try {
        await writePodState(this.deps.podDir, s);
      } catch (err) {
        this.savedKey = ''; // the next save writes again
        if (!this.closed) this.deps.log.error({ err, pod: this.pod.metadata.name }, 'writing the pod state failed');
      }
    }
  }

  /** Resolves once the state last saved is on disk. */
  persisted(): Promise<void> {
    return this.saving ?? Promise.resolve();
  }

  // ---- the sync loop ----------------------------------------------------------------------------------

  update(pod: Pod): void {
    // A pod's containers are immutable once it runs; the object still carries labels (downward API) and
    // the deletion request.
    this.pod = pod;
    if (pod.metadata.deletionTimestamp) void this.terminate(pod.metadata.deletionGracePeriodSeconds);
    else this.kick();
  }

  kick(): void {
    if (this.closed || this.terminating) return;
    if (this.syncing) {
      this.again = true;
      return;
    }
    this.syncing = true;
    void (async () => {
      try {
        do {
          this.again = false;
          await this.sync();
        } while (this.again && !this.closed && !this.terminating);
      } catch (err) {
        this.deps.log.error({ err, pod: this.pod.metadata.name }, 'pod sync failed');
        this.later(this.deps.resyncMs);
      } finally {
        this.syncing = false;
        this.save();
        this.deps.onStatus();
      }
    })();
  }

  private later(ms: number): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.kick();
    }, ms);
    this.timer.unref();
  }

  private async sync(): Promise<void> {
    if (this.terminating || this.closed) return;
    try {
      await materializeVolumes(this.pod, this.deps.podDir, this.deps.inputs, this.podIP, this.deps.node);
      this.volumesReady = true;
      this.lastVolumeError = '';
    } catch (err) {
      if (!(err instanceof VolumeError)) throw err;
      // Once set up, a volume keeps its last content if its source goes away, as kubelet's do.
      if (!this.volumesReady) {
        if (err.message !== this.lastVolumeError) this.event('Warning', 'FailedMount', err.message);
        this.lastVolumeError = err.message;
        this.later(this.deps.resyncMs);
        return;
      }
    }
    const policy = this.pod.spec.restartPolicy ?? 'Always';
    let nextWake = Infinity;
    // Init containers: in order, each to success before the next.
    for (const c of this.pod.spec.initContainers ?? []) {
      const slot = this.slot(c.name);
      if (slot.proc?.running || slot.stopping) return;
      const last = slot.lastTerminated;
      if (last && last.exitCode === 0) continue;
      if (last && policy === 'Never') return; // the pod has failed
      const wait = await this.startIfDue(slot);
      if (wait > 0) this.later(wait);
      return;
    }
    for (const c of this.pod.spec.containers) {
      const slot = this.slot(c.name);
      if (slot.proc?.running || slot.stopping) continue;
      const last = slot.lastTerminated;
      if (last) {
        const restart = policy === 'Always' || (policy === 'OnFailure' && last.exitCode !== 0);
        if (!restart) continue;
      }
      const wait = await this.startIfDue(slot);
      if (wait > 0) nextWake = Math.min(nextWake, wait);
    }
    if (nextWake < Infinity) this.later(nextWake);
  }

  /** Starts the container unless it is in back-off; returns how long until it may be tried again (0: done). */
  private async startIfDue(slot: Slot): Promise<number> {
    const key = this.key(slot);
    const now = Date.now();
    if (slot.runs > 0) {
      const finishedAt = slot.finishedMs ?? (slot.lastTerminated?.finishedAt ? Date.parse(slot.lastTerminated.finishedAt) : now);
      const remaining = this.deps.backoff.remaining(key, finishedAt, now);
      if (remaining > 0) {
        const delay = this.deps.backoff.delay(key) ?? remaining;
        const message = `back-off ${goDuration(delay)} restarting failed container=${slot.spec.name} pod=${podFullName(this.pod)}`;
        if (slot.waiting?.reason !== 'CrashLoopBackOff' || slot.waiting.message !== message) {
          this.event('Warning', 'BackOff', `Back-off restarting failed container ${slot.spec.name} in pod ${podFullName(this.pod)}`, slot);
        }
        slot.waiting = { reason: 'CrashLoopBackOff', message };
        return remaining;
      }
      this.deps.backoff.next(key, now);
    }
    return this.start(slot);
  }

  private async start(slot: Slot): Promise<number> {
    const c = slot.spec;
    let env: Map<string, string>;
    let argv: string[];
    try {
      env = await resolveContainerEnv(this.pod, c, this.deps.inputs, this.podIP, this.deps.node);
      argv = containerArgv(c, env);
    } catch (err) {
      if (!(err instanceof ContainerConfigError)) throw err;
      // Not a crash: the container waits, and the sync tries again later (kubelet: every sync).
      if (slot.waiting?.message !== err.message) this.event('Warning', 'Failed', `Error: ${err.message}`, slot);
      slot.waiting = { reason: err.reason, message: err.message };
      if (slot.runs > 0) this.deps.backoff.forget(this.key(slot)); // it never ran: no crash loop to pace
      return this.deps.resyncMs;
    }
    try {
      await ContainerProcess.prepare(this.runDir(), c.name);
    } catch (err) {
      this.deps.log.warn({ err, pod: this.pod.metadata.name, container: c.name }, 'cannot make the output FIFOs ahead; the start makes them');
    }
    if (this.closed || this.terminating) return 0;
    const fs = containerFilesystem(this.pod, this.deps.podDir, c, this.deps.hostMountPaths);
    for (const l of fs.hostLinks) this.hostLinks.add(l);
    const fullEnv: Record<string, string> = {
      ...this.deps.baseEnv,
      HOSTNAME: this.pod.spec.hostname ?? this.pod.metadata.name ?? '',
      HOME: fs.root,
      POD_IP: this.podIP,
      ...Object.fromEntries(fs.env),
      ...Object.fromEntries(env),
    };
    const cwd = this.workingDir(c, fs.root);
    slot.env = fullEnv;
    slot.cwd = cwd;
    const found = lookPath(argv[0] ?? '', fullEnv, cwd);
    const restart = slot.runs;
    slot.runs++;
    slot.waiting = undefined;
    if (typeof found !== 'string') {
      // containerd's StartError: the run counts, it ends at once with 128, and back-off paces the retries.
      const at = new Date().toISOString();
      this.terminatedRun(slot, { exitCode: 128, reason: 'StartError', message: found.error, startedAt: at, finishedAt: at });
      this.event('Warning', 'Failed', `Error: ${found.error}`, slot);
      this.kickSoon();
      return 0;
    }
    slot.cgroup = containerCgroup(this.deps.cgroups, this.uid, c.name, c.resources);
    let cp: ContainerProcess;
    try {
      cp = ContainerProcess.start({
        argv: [found, ...argv.slice(1)],
        env: fullEnv,
        cwd,
        runDir: this.runDir(),
        logDirPod: this.deps.podDir,
        container: c.name,
        restart,
        rotation: this.deps.rotation,
        cgroup: slot.cgroup,
        onSpawn: this.deps.onSpawn,
      });
    } catch (err) {
      const at = new Date().toISOString();
      this.terminatedRun(slot, { exitCode: 128, reason: 'StartError', message: (err as Error).message, startedAt: at, finishedAt: at });
      this.kickSoon();
      return 0;
    }
    slot.proc = cp;
    slot.record = cp.record;
    this.event('Normal', 'Created', `Created container ${c.name}`, slot);
    this.event('Normal', 'Started', `Started container ${c.name}`, slot);
    this.watchRun(slot, cp, 0);
    this.save();
    return 0;
  }

  private kickSoon(): void {
    setImmediate(() => this.kick());
  }

  private workingDir(c: Container, root: string): string {
    // An existing host directory is used as it is; otherwise the path is made inside the container root.
    if (!c.workingDir) return root;
    if (isAbsolute(c.workingDir) && existsSync(c.workingDir)) return c.workingDir;
    const dir = join(root, c.workingDir.replace(/^\/+/, ''));
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  private watchRun(slot: Slot, cp: ContainerProcess, elapsedMs: number): void {
    const c = slot.spec;
    if (!slot.init) {
      const env = slot.env ?? { ...this.deps.baseEnv, POD_IP: this.podIP };
      const cwd = slot.cwd ?? join(this.deps.podDir, 'root', c.name);
      slot.prober = new ContainerProber(
        { liveness: c.livenessProbe, readiness: c.readinessProbe, startup: c.startupProbe },
        { podIP: this.podIP, container: c, env, cwd },
        {
          changed: () => this.deps.onStatus(),
          unhealthy: (kind, message) => this.event('Warning', 'Unhealthy', `${kind} probe failed: ${message.trim()}`, slot),
          failed: (kind, message) => this.probeFailed(slot, kind, message),
        },
        runProbe,
      );
      slot.prober.start(elapsedMs);
    }
    void cp.exited.then((info) => this.exited(slot, cp, info));
  }

  private probeFailed(slot: Slot, kind: ProbeKind, _message: string): void {
    if (slot.stopping || this.terminating) return;
    this.event('Normal', 'Killing', `Container ${slot.spec.name} failed ${kind.toLowerCase()} probe, will be restarted`, slot);
    const probe = kind === 'Liveness' ? slot.spec.livenessProbe : slot.spec.startupProbe;
    const graceS = probe?.terminationGracePeriodSeconds ?? this.pod.spec.terminationGracePeriodSeconds ?? 30;
    void this.stopContainer(slot, graceS * 1000);
  }

  private exited(slot: Slot, cp: ContainerProcess, info: ExitInfo): void {
    if (slot.proc !== cp) return;
    slot.prober?.stop();
    slot.prober = undefined;
    slot.proc = undefined;
    const oom = oomKills(slot.cgroup) > 0;
    const t: ContainerStateTerminated = {
      exitCode: info.exitCode,
      reason: info.unknown ? 'ContainerStatusUnknown' : oom ? 'OOMKilled' : info.exitCode === 0 ? 'Completed' : 'Error',
      startedAt: new Date(slot.record?.startedAt ?? info.finishedAt).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      finishedAt: new Date(info.finishedAt).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    };
    if (info.signal !== undefined) t.signal = info.signal;
    if (info.unknown) t.message = 'The container could not be located when the pod was terminated';
    if (slot.record) t.containerID = slot.record.containerID;
    this.terminatedRun(slot, t);
    this.deps.log.info({ pod: this.pod.metadata.name, container: slot.spec.name, exitCode: t.exitCode, reason: t.reason }, 'container exited');
    this.save();
    this.deps.onStatus();
    this.kick();
  }

  private terminatedRun(slot: Slot, t: ContainerStateTerminated): void {
    slot.prevTerminated = slot.lastTerminated;
    slot.lastTerminated = t;
    slot.finishedMs = Date.now();
    slot.waiting = undefined;
  }

  // ---- stopping ---------------------------------------------------------------------------------------

  /** preStop, then SIGTERM to the group, then SIGKILL when the grace period is over. */
  private async stopContainer(slot: Slot, graceMs: number): Promise<void> {
    const cp = slot.proc;
    if (!cp?.running || slot.stopping) {
      await cp?.exited;
      return;
    }
    slot.stopping = true;
    slot.prober?.stop();
    const began = Date.now();
    const hook = slot.spec.lifecycle?.preStop;
    if (hook && !slot.init) {
      const env = slot.env ?? { ...this.deps.baseEnv, POD_IP: this.podIP };
      const cwd = slot.cwd ?? this.deps.podDir;
      if (hook.exec?.command) {
        const r = await Promise.race([execCommand(hook.exec.command, env, cwd, Math.max(graceMs, 1)), cp.exited.then(() => undefined)]);
        if (r && (r.exitCode !== 0 || r.timedOut)) {
          const why = r.timedOut ? 'timed out' : `exited with ${String(r.exitCode)}: ${r.output || (r.error ?? '')}`;
          this.event('Warning', 'FailedPreStopHook', `PreStopHook failed: command '${hook.exec.command.join(' ')}' ${why}`.trim(), slot);
        }
      } else if (hook.sleep) {
        await Promise.race([new Promise((r) => setTimeout(r, Math.min(hook.sleep?.seconds ?? 0, graceMs / 1000) * 1000)), cp.exited]);
      }
    }
    const left = Math.max(graceMs - (Date.now() - began), MIN_GRACE_MS);
    cp.signal('SIGTERM');
    const killer = setTimeout(() => cp.signal('SIGKILL'), left);
    await cp.exited;
    clearTimeout(killer);
    slot.stopping = false;
  }

  /** Deletion: every container stopped gracefully, then the pod is terminal (Succeeded or Failed). */
  terminate(graceSeconds?: number): Promise<void> {
    if (this.terminating) return this.terminating;
    const graceMs = (graceSeconds ?? this.pod.metadata.deletionGracePeriodSeconds ?? this.pod.spec.terminationGracePeriodSeconds ?? 30) * 1000;
    if (this.timer) clearTimeout(this.timer);
    this.terminating = (async () => {
      const running = [...this.slots.values()].filter((s) => s.proc?.running);
      for (const s of running) this.event('Normal', 'Killing', `Stopping container ${s.spec.name}`, s);
      await Promise.all(running.map((s) => this.stopContainer(s, graceMs)));
      this.terminated = true;
      this.save();
      this.deps.onStatus();
    })();
    return this.terminating;
  }

  /** A sync is running: its end reports the status (onStatus), so reporting the one before it is moot. */
  get isSyncing(): boolean {
    return this.syncing;
  }

  get isTerminated(): boolean {
    return this.terminated;
  }

  /** Stops watching without touching the processes: the agent is going away and the next one adopts. */
  detach(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    for (const s of this.slots.values()) {
      s.prober?.stop();
      s.proc?.detach();
    }
  }

  get hostLinkList(): string[] {
    return [...this.hostLinks];
  }

  /** Running container process ids (for tests and the node's pid accounting). */
  pids(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, s] of this.slots) if (s.proc?.running && s.record) out[name] = s.record.pid;
    return out;
  }

  // ---- status -----------------------------------------------------------------------------------------

  status(): PodStatus {
    const init: ContainerStatus[] = [];
    const main: ContainerStatus[] = [];
    let initDone = true;
    for (const c of this.pod.spec.initContainers ?? []) {
      const s = this.slot(c.name);
      init.push(this.containerStatus(s, false));
      if (!(s.lastTerminated?.exitCode === 0 && !s.proc?.running)) initDone = false;
    }
    for (const c of this.pod.spec.containers) main.push(this.containerStatus(this.slot(c.name), !initDone));
    let phase: PodPhase = podPhase(this.pod.spec, init, main);
    if (this.terminated && phase !== 'Succeeded' && phase !== 'Failed') {
      // kubelet makes a deleted pod terminal: Succeeded only if every container ended with 0.
      const allZero = main.every((s) => s.state.terminated?.exitCode === 0);
      phase = allZero ? 'Succeeded' : 'Failed';
    }
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    this.conditions = podConditions(this.pod.spec, phase, init, main, this.conditions, now);
    const st: PodStatus = {
      phase,
      conditions: this.conditions,
      hostIP: this.deps.node.hostIP,
      hostIPs: [{ ip: this.deps.node.hostIP }],
      podIP: this.podIP,
      podIPs: [{ ip: this.podIP }],
      startTime: this.startTime,
      containerStatuses: main,
      qosClass: qosClass(this.pod),
    };
    if (init.length > 0) st.initContainerStatuses = init;
    return st;
  }

  private containerStatus(s: Slot, initPending: boolean): ContainerStatus {
    const running = s.proc?.running === true && !this.terminated;
    const out: ContainerStatus = {
      name: s.spec.name,
      state: {},
      lastState: {},
      ready: false,
      restartCount: Math.max(0, s.runs - 1),
      image: s.spec.image ?? '',
      imageID: '',
      started: false,
    };
    const id = s.record?.containerID ?? s.lastTerminated?.containerID;
    if (id) out.containerID = id;
    if (running && s.record) {
      out.state = { running: { startedAt: new Date(s.record.startedAt).toISOString().replace(/\.\d{3}Z$/, 'Z') } };
      if (s.lastTerminated) out.lastState = { terminated: s.lastTerminated };
      out.started = s.init ? false : (s.prober?.started ?? true);
      out.ready = !s.init && !s.stopping && (s.prober?.ready ?? true);
      return out;
    }
    if (s.lastTerminated) {
      if (s.waiting && !this.terminated) {
        out.state = { waiting: s.waiting };
        out.lastState = { terminated: s.lastTerminated };
      } else {
        out.state = { terminated: s.lastTerminated };
        if (s.prevTerminated) out.lastState = { terminated: s.prevTerminated };
      }
      if (s.init && s.lastTerminated.exitCode === 0) out.ready = true;
      return out;
    }
    out.state = { waiting: s.waiting ?? { reason: initPending ? 'PodInitializing' : 'ContainerCreating' } };
    return out;
  }

  // ---- helpers ----------------------------------------------------------------------------------------

  private slot(name: string): Slot {
    const s = this.slots.get(name);
    if (!s) throw new Error(`no container ${name}`);
    return s;
  }

  private key(s: Slot): string {
    return `${this.uid}/${s.spec.name}`;
  }

  private runDir(): string {
    return join(this.deps.podDir, 'run');
  }

  private event(type: 'Normal' | 'Warning', reason: string, message: string, slot?: Slot): void {
    const e: PodEvent = {
      type,
      reason,
      message,
      pod: { uid: this.uid, name: this.pod.metadata.name ?? '', namespace: this.pod.metadata.namespace ?? 'default' },
      ...(slot ? { fieldPath: `spec.${slot.init ? 'initContainers' : 'containers'}{${slot.spec.name}}` } : {}),
    };
    this.deps.onEvent(e);
  }

  /** Restart index of the current (or last) run, for the log reader. */
  logRestart(container: string, previous: boolean): number | undefined {
    const s = this.slots.get(container);
    if (!s || s.runs === 0) return undefined;
    const current = s.runs - 1;
    return previous ? (current > 0 ? current - 1 : undefined) : current;
  }

  isContainerRunning(container: string): boolean {
    return this.slots.get(container)?.proc?.running === true;
  }

  containerNames(): string[] {
    return [...this.slots.keys()];
  }
}

/** Kubernetes' QoS class from requests and limits. */
export function qosClass(pod: Pod): string {
  const all = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])];
  let any = false;
  let guaranteed = true;
  for (const c of all) {
    const req = c.resources?.requests ?? {};
    const lim = c.resources?.limits ?? {};
    for (const r of ['cpu', 'memory']) {
      const l = lim[r];
      const q = req[r] ?? l;
      if (q !== undefined || l !== undefined) any = true;
      if (l === undefined || q === undefined || Quantity.parse(q).cmp(Quantity.parse(l)) !== 0) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
