// The fault schedule, decided entirely from the seed before the run starts: when each fault begins and
// ends, which kind, and the random choices it makes (a permutation of member slots to pick victims
// from). Targets that depend on the live cluster ("the leader") are resolved when the fault fires.
import type { SeededRng } from '../../src/raft/rng.js';

export const PARTITION_SHAPES = ['one', 'leader', 'majority', 'bridge', 'majorities-ring'] as const;
export type PartitionShape = (typeof PARTITION_SHAPES)[number];
export const NEMESES = [...PARTITION_SHAPES, 'partition', 'delay', 'loss', 'kill', 'pause', 'member', 'none'] as const;
export type NemesisName = (typeof NEMESES)[number];
export type ProcessTarget = 'one' | 'leader' | 'majority' | 'all';

export type FaultSpec =
  | { kind: 'partition'; shape: PartitionShape; perm: number[] }
  | { kind: 'delay'; delayMs: number; jitterMs: number }
  | { kind: 'loss'; loss: number }
  | { kind: 'kill'; target: ProcessTarget; perm: number[] }
  | { kind: 'pause'; target: ProcessTarget; perm: number[] }
  | { kind: 'member'; perm: number[] };

export interface ScheduledFault {
  /** ms since the run started */
  at: number;
  until: number;
  spec: FaultSpec;
}

export interface Phases {
  /** Faults are scheduled in [warmup, total - recovery]. */
  warmupMs: number;
  recoveryMs: number;
  totalMs: number;
  /** Mean fault length and mean gap between faults. */
  intervalMs: number;
}

/** jepsen.etcd's shape: 5 s calm, faults every ~5 s, heal, 10 s to recover — scaled down for short runs. */
export function phasesFor(totalMs: number, intervalMs = 5000): Phases {
  return {
    totalMs,
    warmupMs: Math.min(5000, totalMs * 0.15),
    recoveryMs: Math.min(10_000, totalMs * 0.2),
    intervalMs: Math.min(intervalMs, totalMs * 0.15),
  };
}

export function parseNemeses(s: string): NemesisName[] {
  const out: NemesisName[] = [];
  for (const part of s.split(',').map((x) => x.trim()).filter(Boolean)) {
    if (!(NEMESES as readonly string[]).includes(part)) throw new Error(`unknown nemesis "${part}" (one of ${NEMESES.join(', ')})`);
    out.push(part as NemesisName);
  }
  return out;
}

function permutation(n: number, rng: SeededRng): number[] {
  const p = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [p[i], p[j]] = [p[j]!, p[i]!];
  }
  return p;
}

const TARGETS: ProcessTarget[] = ['one', 'leader', 'majority', 'all'];

function specFor(name: Exclude<NemesisName, 'none'>, slots: number, rng: SeededRng): FaultSpec {
  const perm = permutation(slots, rng);
  switch (name) {
    case 'partition':
      return { kind: 'partition', shape: PARTITION_SHAPES[rng.int(PARTITION_SHAPES.length)]!, perm };
    case 'delay':
      return { kind: 'delay', delayMs: 50 + rng.int(100), jitterMs: 25 + rng.int(50) };
    case 'loss':
      return { kind: 'loss', loss: 0.1 + rng.int(20) / 100 };
    case 'kill':
    case 'pause': {
      // "all" is the harshest; keep it rarer so most faults leave a quorum to measure.
      const r = rng.float();
      const target = r < 0.35 ? TARGETS[0]! : r < 0.7 ? TARGETS[1]! : r < 0.9 ? TARGETS[2]! : TARGETS[3]!;
      return { kind: name, target, perm };
    }
    case 'member':
      return { kind: 'member', perm };
    default:
      return { kind: 'partition', shape: name, perm };
  }
}

export function makeSchedule(names: NemesisName[], ph: Phases, slots: number, rng: SeededRng): ScheduledFault[] {
  const usable = names.filter((n): n is Exclude<NemesisName, 'none'> => n !== 'none');
  const out: ScheduledFault[] = [];
  if (usable.length === 0) return out;
  const end = ph.totalMs - ph.recoveryMs;
  let t = ph.warmupMs;
  // Kinds are dealt from seeded shuffles of the list, so a short run still gets one of each.
  let deck: Exclude<NemesisName, 'none'>[] = [];
  for (;;) {
    const len = ph.intervalMs * (0.6 + rng.float() * 0.8);
    const gap = ph.intervalMs * (0.6 + rng.float() * 0.8);
    if (t + len > end) break;
    if (deck.length === 0) deck = permutation(usable.length, rng).map((i) => usable[i]!);
    out.push({ at: t, until: t + len, spec: specFor(deck.shift()!, slots, rng) });
    t += len + gap;
  }
  return out;
}

export function describeSpec(s: FaultSpec): string {
  switch (s.kind) {
    case 'partition':
      return `partition ${s.shape}`;
    case 'delay':
      return `delay ${s.delayMs}±${s.jitterMs}ms`;
    case 'loss':
      return `loss ${Math.round(s.loss * 100)}%`;
    case 'kill':
    case 'pause':
      return `${s.kind} ${s.target}`;
    case 'member':
      return 'member add-learner/promote, then remove';
  }
}
