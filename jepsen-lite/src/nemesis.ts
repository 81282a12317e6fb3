// Runs the seeded fault schedule against the live cluster: partitions, delay and loss through the
// network rules the proxies obey; SIGKILL/restart and SIGSTOP/SIGCONT on member processes; learner
// add/promote/remove through the Cluster API. Every fault's start and end goes into the history.
import type { Cluster } from './cluster.js';
import type { FaultRecord, History } from './history.js';
import type { Network } from './network.js';
import { describeSpec, type FaultSpec, type PartitionShape, type ProcessTarget, type ScheduledFault } from './schedule.js';
import { errorText } from './etcd-client.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, ms)));

function bothWays(a: number[], b: number[]): [number, number][] {
  const out: [number, number][] = [];
  for (const x of a) for (const y of b) if (x !== y) out.push([x, y], [y, x]);
  return out;
}

/** How long the member nemesis keeps trying to add its learner (at least 20 attempts). */
const ADD_RETRY_MS = 30_000;

/** Directed cuts for a partition shape over member slots, in the order of a seeded permutation. */
export function partitionCuts(shape: PartitionShape, order: number[], leader: number | undefined): [number, number][] {
  const n = order.length;
  if (n < 2) return [];
  switch (shape) {
    case 'one':
    case 'leader': {
      const victim = shape === 'leader' && leader !== undefined && order.includes(leader) ? leader : order[0]!;
      return bothWays([victim], order.filter((x) => x !== victim));
    }
    case 'majority': {
      const k = Math.floor(n / 2);
      return bothWays(order.slice(0, k), order.slice(k));
    }
    case 'bridge': {
      // Two halves that only one node (the bridge) can reach both of.
      const h = Math.floor((n - 1) / 2);
      return bothWays(order.slice(0, h), order.slice(h + 1));
    }
    case 'majorities-ring': {
      // Node at ring position p hears from its nearest neighbours (+1, -1, +2, …) up to a majority:
      // every node sees a majority, no two see the same one (asymmetric for 3 nodes, as in Jepsen).
      const need = Math.floor(n / 2);
      const cuts: [number, number][] = [];
      order.forEach((x, p) => {
        const hears = new Set<number>();
        for (let d = 1; hears.size < need; d++) {
          hears.add(order[(p + d) % n]!);
          if (hears.size < need) hears.add(order[(p - d + n * d) % n]!);
        }
        for (const y of order) if (y !== x && !hears.has(y)) cuts.push([y, x]);
      });
      return cuts;
    }
  }
}

export class NemesisRunner {
  private active: { rec: FaultRecord; spec: FaultSpec; undo: () => Promise<string | void> }[] = [];
  private stopped = false;
  /** Fault records as they happen, for the progress display. */
  current = 'none';

  constructor(
    private readonly cluster: Cluster,
    private readonly network: Network,
    private readonly history: History,
    private readonly schedule: ScheduledFault[],
  ) {}

  /** Drives the schedule; resolves when it is done (or stop() is called). */
  async run(): Promise<void> {
    for (const f of this.schedule) {
      await this.sleepUntil(f.at);
      if (this.stopped) return;
      await this.begin(f.spec);
      await this.sleepUntil(f.until);
      await this.healAll();
      if (this.stopped) return;
    }
  }

  private async sleepUntil(t: number): Promise<void> {
    while (!this.stopped && this.history.now() < t) await sleep(Math.min(200, t - this.history.now()));
  }

  stop(): void {
    this.stopped = true;
  }

  private memberOrder(perm: number[]): number[] {
    const members = new Set(this.cluster.members().map((s) => s.index));
    return perm.filter((i) => members.has(i));
  }

  private async targets(target: ProcessTarget, perm: number[]): Promise<number[]> {
    const order = this.memberOrder(perm).filter((i) => this.cluster.slots[i]!.state === 'up');
    switch (target) {
      case 'one':
        return order.slice(0, 1);
      case 'leader': {
        const l = await this.cluster.leaderSlot();
        return l !== undefined && order.includes(l) ? [l] : order.slice(0, 1);
      }
      case 'majority':
        return order.slice(0, Math.floor(this.cluster.members().length / 2) + 1);
      case 'all':
        return order;
    }
  }

  private name(i: number): string {
    return this.cluster.slots[i]!.name;
  }

  async begin(spec: FaultSpec): Promise<void> {
    const rec = this.history.faultStart(spec.kind === 'partition' ? `partition-${spec.shape}` : spec.kind, describeSpec(spec));
    let undo: () => Promise<string | void> = async () => {};
    switch (spec.kind) {
      case 'partition': {
        const leader = spec.shape === 'leader' ? await this.cluster.leaderSlot() : undefined;
        const cuts = partitionCuts(spec.shape, this.memberOrder(spec.perm), leader);
        this.network.setCuts(cuts);
        rec.detail += `: ${describeCuts(cuts, (i) => this.name(i))}`;
        undo = async () => this.network.healAll();
        break;
      }
      case 'delay':
      case 'loss': {
        const order = this.memberOrder(this.cluster.slots.map((s) => s.index));
        const links = bothWays(order, order);
        if (spec.kind === 'delay') this.network.setQuality(links, { delayMs: spec.delayMs, jitterMs: spec.jitterMs, loss: 0 });
        else this.network.setQuality(links, { delayMs: 5, jitterMs: 5, loss: spec.loss });
        undo = async () => this.network.healAll();
        break;
      }
      case 'kill': {
        const victims = await this.targets(spec.target, spec.perm);
        await Promise.all(victims.map((i) => this.cluster.kill(i)));
        rec.detail += `: ${victims.map((i) => this.name(i)).join(' ')}`;
        undo = async () => {
          for (const i of victims) this.cluster.restart(i);
        };
        break;
      }
      case 'pause': {
        const victims = await this.targets(spec.target, spec.perm);
        for (const i of victims) this.cluster.pause(i);
        rec.detail += `: ${victims.map((i) => this.name(i)).join(' ')}`;
        undo = async () => {
          for (const i of victims) this.cluster.resume(i);
        };
        break;
      }
      case 'member': {
        const grow = this.grow(rec);
        undo = async () => {
          await grow;
          return this.shrink(spec.perm);
        };
        break;
      }
    }
    this.active.push({ rec, spec, undo });
    this.current = rec.detail;
  }

  /** Adds a learner in the free slot and promotes it once it has caught up (etcd refuses before). */
  private async grow(rec: FaultRecord): Promise<void> {
    const slot = this.cluster.freeSlot();
    if (!slot) {
      rec.detail += '; no free slot';
      return;
    }
    let lastErr = '';
    // Refused as an "unhealthy cluster" until the member asked has had its links to every voter up for
    // 5 s (etcd's --strict-reconfig-check), e.g. just after a kill or a partition ended: an operator
    // tries again, for as long as that may take on a slow machine.
    const addDeadline = Date.now() + ADD_RETRY_MS;
    for (let attempt = 0; !this.stopped && (attempt < 20 || Date.now() < addDeadline); attempt++) {
      try {
        await this.cluster.addLearner(slot, 3000);
        rec.detail += `; added learner ${slot.name}`;
        break;
      } catch (e) {
        lastErr = errorText(e);
        await sleep(500);
      }
    }
    if (!slot.member) {
      rec.detail += `; add failed (${lastErr})`;
      return;
    }
    for (let attempt = 0; !this.stopped && attempt < 40; attempt++) {
      try {
        await this.cluster.promote(slot, 3000);
        rec.detail += `; promoted ${slot.name}`;
        return;
      } catch (e) {
        lastErr = errorText(e);
        await sleep(250);
      }
    }
    rec.detail += `; promote failed (${lastErr})`;
  }

  /** Removes one member (seeded choice) while there are more members than the run started with. */
  private async shrink(perm: number[]): Promise<string> {
    const members = this.cluster.members();
    if (members.length <= this.cluster.o.nodes) return 'nothing to remove';
    const order = this.memberOrder(perm);
    let lastErr = '';
    for (let attempt = 0; attempt < 20; attempt++) {
      const victim = this.cluster.slots[order[attempt % order.length]!]!;
      try {
        await this.cluster.removeMember(victim, 3000);
        return `removed ${victim.name}`;
      } catch (e) {
        lastErr = errorText(e);
        await sleep(500);
      }
    }
    return `remove failed (${lastErr})`;
  }

  /** Ends every active fault: heal the network, resume, restart, restore the member count. */
  async healAll(): Promise<void> {
    const act = this.active;
    this.active = [];
    for (const a of act) {
      const more = await a.undo();
      this.history.faultEnd(a.rec, more || undefined);
    }
    this.network.healAll();
    for (const s of this.cluster.slots) {
      if (s.state === 'paused') this.cluster.resume(s.index);
      if (s.state === 'killed' && s.member) this.cluster.restart(s.index);
    }
    this.current = 'none';
  }
}

function describeCuts(cuts: [number, number][], name: (i: number) => string): string {
  const pairs = new Set<string>();
  const oneWay: string[] = [];
  for (const [a, b] of cuts) {
    if (cuts.some(([x, y]) => x === b && y === a)) {
      if (a < b) pairs.add(`${name(a)}×${name(b)}`);
    } else oneWay.push(`${name(a)}→${name(b)}`);
  }
  return [...pairs, ...oneWay].join(' ') || 'no links cut';
}
