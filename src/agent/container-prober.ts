// The probes of one container run, as kubelet's probe workers keep them: each probe waits its initial
// delay, then runs every period; its result flips after successThreshold successes or failureThreshold
// failures in a row. A startup probe holds the other two until it has succeeded once. Readiness starts
// false; liveness and startup start healthy. A failed liveness or startup probe asks for a restart.
import type { Probe } from './pod-types.js';
import type { ProbeOutcome, ProbeTarget } from './probe.js';
import { probeTiming, runProbe } from './probe.js';

export type ProbeKind = 'Liveness' | 'Readiness' | 'Startup';

export interface ProberEvents {
  /** The container's started/ready flags moved: the pod's status should be recomputed. */
  changed(): void;
  /** Liveness or startup failed: kill and restart the container per the pod's policy. */
  failed(kind: ProbeKind, message: string): void;
  /** Each failed attempt: kubelet's Unhealthy event (`<Kind> probe failed: <message>`). */
  unhealthy(kind: ProbeKind, message: string): void;
}

type Runner = (p: Probe, t: ProbeTarget) => Promise<ProbeOutcome>;

export class ContainerProber {
  started: boolean;
  ready: boolean;
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly probes: { liveness?: Probe | undefined; readiness?: Probe | undefined; startup?: Probe | undefined },
    private readonly target: ProbeTarget,
    private readonly events: ProberEvents,
    private readonly run: Runner = runProbe,
  ) {
    this.started = probes.startup === undefined;
    this.ready = probes.readiness === undefined && this.started;
  }

  /** Starts the loops; `elapsedMs` is how long the container has already been running (adoption). */
  start(elapsedMs = 0): void {
    if (this.probes.startup) this.loop('Startup', this.probes.startup, elapsedMs);
    if (this.probes.liveness) this.loop('Liveness', this.probes.liveness, elapsedMs);
    if (this.probes.readiness) this.loop('Readiness', this.probes.readiness, elapsedMs);
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private later(ms: number, f: () => void): void {
    if (this.stopped) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (!this.stopped) f();
    }, ms);
    this.timers.add(t);
  }

  private loop(kind: ProbeKind, p: Probe, elapsedMs: number): void {
    const timing = probeTiming(p);
    let successes = 0;
    let failures = 0;
    const attempt = async (): Promise<void> => {
      // Liveness and readiness wait for the startup probe; the period keeps ticking meanwhile.
      if (kind !== 'Startup' && !this.started) {
        this.later(timing.periodMs, () => void attempt());
        return;
      }
      if (kind === 'Startup' && this.started) return; // its job is done for this run
      const out = await this.run(p, this.target);
      if (this.stopped) return;
      if (out.ok) {
        successes++;
        failures = 0;
      } else {
        failures++;
        successes = 0;
        this.events.unhealthy(kind, out.message);
      }
      if (kind === 'Readiness') {
        const was = this.ready;
        if (out.ok && successes >= timing.successThreshold) this.ready = true;
        if (!out.ok && failures >= timing.failureThreshold) this.ready = false;
        if (was !== this.ready) this.events.changed();
      } else if (kind === 'Startup') {
        if (out.ok) {
          this.started = true;
          this.ready = this.probes.readiness === undefined;
          this.events.changed();
          return;
        }
        if (failures >= timing.failureThreshold) {
          this.events.failed(kind, out.message);
          return;
        }
      } else if (!out.ok && failures >= timing.failureThreshold) {
        this.events.failed(kind, out.message);
        return;
      }
      this.later(timing.periodMs, () => void attempt());
    };
    this.later(Math.max(0, timing.initialDelayMs - elapsedMs), () => void attempt());
  }
}
