// Whether a node is still heard from, judged as Kubernetes' monitorNodeHealth judges it: the controller
// notes, on its own monotonic clock, when it last saw the node's Ready heartbeat or its Lease's renewTime
// change, and a node silent for longer than the grace period (the startup grace while it has never
// posted Ready) is Unknown. Never a comparison of two machines' wall clocks. Pure but for the clock.
import type { Clock } from '../../client/clock.js';

interface Probe {
  readyHeartbeat: string | undefined;
  leaseRenew: string | undefined;
  /** Monotonic ms of the last change seen. */
  at: number;
}

export type Health =
  | { readonly kind: 'heard'; readonly silentForMs: number; readonly graceLeftMs: number }
  | { readonly kind: 'silent'; readonly reason: 'NodeStatusUnknown' | 'NodeStatusNeverUpdated'; readonly message: string };

export interface HealthLimits {
  readonly gracePeriodMs: number;
  readonly startupGracePeriodMs: number;
}

export class NodeHealthTracker {
  private readonly probes = new Map<string, Probe>();

  constructor(private readonly clock: Clock) {}

  /** Records what the node shows now; the clock restarts only when a heartbeat or the lease moved. */
  observe(node: string, readyHeartbeat: string | undefined, leaseRenew: string | undefined): void {
    const p = this.probes.get(node);
    if (p !== undefined && p.readyHeartbeat === readyHeartbeat && p.leaseRenew === leaseRenew) return;
    this.probes.set(node, { readyHeartbeat, leaseRenew, at: this.clock.now() });
  }

  /** How long neither the heartbeat nor the Lease moved (0 when never observed). */
  silentForMs(node: string): number {
    const p = this.probes.get(node);
    return p === undefined ? 0 : this.clock.now() - p.at;
  }

  forget(node: string): void {
    this.probes.delete(node);
  }

  judge(node: string, hasPostedReady: boolean, limits: HealthLimits): Health {
    const silentForMs = this.silentForMs(node);
    const grace = hasPostedReady ? limits.gracePeriodMs : limits.startupGracePeriodMs;
    if (silentForMs < grace) return { kind: 'heard', silentForMs, graceLeftMs: grace - silentForMs };
    return hasPostedReady
      ? { kind: 'silent', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' }
      : { kind: 'silent', reason: 'NodeStatusNeverUpdated', message: 'Kubelet never posted node status.' };
  }
}
