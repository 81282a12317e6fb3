// The fault injector, in Jepsen's sense: each tick it may cut the network into one of the classic
// shapes, crash a node (cleanly, or in the middle of a Ready), change membership one step at a time, or
// move leadership. Every choice comes from the seeded Rng it is given.
import type { Rng } from '../raft/rng.js';
import type { RawNode } from '../raft/raw-node.js';
import type { ConfChange, NodeId } from '../raft/types.js';
import type { SimNetwork } from './network.js';
import { between, chance, pick, shuffled } from './random.js';
import type { NodeStatus } from './sim-node.js';

/** A member as the nemesis sees it: the core's SimNode, or the member loop's SimMember (member-loop/). */
export interface NemesisNode {
  readonly id: NodeId;
  readonly status: NodeStatus;
  readonly downSince: number;
  tornNext: boolean;
  readonly raw: RawNode | undefined;
}

/** What the nemesis drives: the core-only SimCluster, or the member-loop cluster. */
export interface NemesisTarget {
  readonly now: number;
  readonly net: SimNetwork;
  readonly cfg: { readonly voters: number; readonly raft: { readonly electionTick: number } };
  readonly nodes: ReadonlyMap<NodeId, NemesisNode>;
  members(): NemesisNode[];
  upNodes(): NemesisNode[];
  leader(): NemesisNode | undefined;
  crash(id: NodeId, torn: boolean): void;
  restart(id: NodeId): void;
  fault(kind: string, text: string): void;
  note(text: string): void;
  announce(text: string): void;
  allocateNodeId(): NodeId;
  proposeConfChange(cc: ConfChange): boolean;
  transferLeader(to: NodeId): boolean;
}

/**
 * one: a node cut off; majority: a clean majority/minority split; primary: the leader isolated;
 * bridge: two halves joined by one node that reaches both; ring: every node sees a majority, no two the
 * same one (needs 4+ members); one-way: the leader can hear but not be heard.
 */
export type PartitionShape = 'one' | 'majority' | 'primary' | 'bridge' | 'ring' | 'one-way';
export const PARTITION_SHAPES: readonly PartitionShape[] = ['one', 'majority', 'primary', 'bridge', 'ring', 'one-way'];

export interface FaultProfile {
  /** Per tick, while no partition is active, the chance that one starts. */
  readonly partitionRate: number;
  readonly partitionTicks: readonly [number, number];
  readonly partitionShapes: readonly PartitionShape[];
  /** Per tick, the chance that a node crashes; with tornRate it dies mid-Ready. */
  readonly crashRate: number;
  readonly tornRate: number;
  /** Chance that a crash targets the leader rather than a random node. */
  readonly crashLeaderBias: number;
  readonly downTicks: readonly [number, number];
  /** Per tick, the chance of one membership step (add learner, promote, remove), one at a time. */
  readonly membershipRate: number;
  /** Per tick, the chance of asking the leader to hand over to another voter. */
  readonly transferRate: number;
}

export class Nemesis {
  private readonly cluster: NemesisTarget;
  private readonly profile: FaultProfile;
  private readonly rng: Rng;
  private readonly restartAfter = new Map<NodeId, number>();
  private partitionEndsAt = 0;
  private membershipBusyUntil = 0;
  private readonly baseVoters: number;

  constructor(cluster: NemesisTarget, profile: FaultProfile, rng: Rng) {
    this.cluster = cluster;
    this.profile = profile;
    this.rng = rng;
    this.baseVoters = cluster.cfg.voters;
  }

  step(): void {
    const c = this.cluster;
    const p = this.profile;
    this.restartDue();
    if (this.partitionEndsAt > 0 && c.now >= this.partitionEndsAt) {
      c.net.heal();
      this.partitionEndsAt = 0;
      c.announce('network healed');
    } else if (this.partitionEndsAt === 0 && p.partitionShapes.length > 0 && this.chance(p.partitionRate)) {
      this.partition();
    }
    if (this.chance(p.crashRate)) this.crash();
    if (this.chance(p.membershipRate)) this.changeMembership();
    if (this.chance(p.transferRate)) this.transfer();
  }

  /** End of the fault phase: heal the network, restart every crashed member, cancel pending crashes. */
  healAll(): void {
    const c = this.cluster;
    c.net.heal();
    this.partitionEndsAt = 0;
    for (const n of c.members()) {
      n.tornNext = false;
      if (n.status === 'down') c.restart(n.id);
    }
    this.restartAfter.clear();
    c.note('nemesis stopped: network healed, all members running');
  }

  private chance(p: number): boolean {
    return chance(this.rng, p);
  }

  private restartDue(): void {
    const c = this.cluster;
    for (const [id, ticks] of this.restartAfter) {
      const n = c.nodes.get(id);
      if (n === undefined || n.status === 'stopped') this.restartAfter.delete(id);
      else if (n.status === 'down' && c.now - n.downSince >= ticks) {
        this.restartAfter.delete(id);
        c.restart(id);
      }
    }
  }

  private crash(): void {
    const c = this.cluster;
    const leader = c.leader();
    const target = leader !== undefined && this.chance(this.profile.crashLeaderBias) ? leader : pick(this.rng, c.upNodes());
    if (target === undefined || this.restartAfter.has(target.id)) return;
    const torn = this.chance(this.profile.tornRate);
    const down = between(this.rng, this.profile.downTicks);
    this.restartAfter.set(target.id, down);
    c.fault(torn ? 'crash-mid-ready' : 'crash', `node ${target.id}${target === leader ? ' (leader)' : ''} for ${down} ticks`);
    c.crash(target.id, torn);
  }

  private partition(): void {
    const c = this.cluster;
    const ids = shuffled(this.rng, c.members().map((n) => n.id));
    if (ids.length < 2) return;
    let shape = pick(this.rng, this.profile.partitionShapes) as PartitionShape;
    if (shape === 'ring' && ids.length < 4) shape = 'majority';
    if (shape === 'bridge' && ids.length < 3) shape = 'one';
    const leader = c.leader();
    let text: string;
    switch (shape) {
      case 'one': {
        const [a, ...rest] = ids;
        c.net.split([[a as NodeId], rest]);
        text = `node ${String(a)} cut off`;
        break;
      }
      case 'majority': {
        const k = Math.floor(ids.length / 2);
        c.net.split([ids.slice(0, k), ids.slice(k)]);
        text = `[${ids.slice(0, k).join(',')}] | [${ids.slice(k).join(',')}]`;
        break;
      }
      case 'primary': {
        const l = leader?.id ?? (ids[0] as NodeId);
        c.net.split([[l], ids.filter((x) => x !== l)]);
        text = `leader ${l} isolated`;
        break;
      }
      case 'bridge': {
        const [b, ...rest] = ids;
        const half = Math.floor(rest.length / 2);
        c.net.split([rest.slice(0, half), rest.slice(half)]);
        text = `[${rest.slice(0, half).join(',')}] | [${rest.slice(half).join(',')}] bridged by ${String(b)}`;
        break;
      }
      case 'ring': {
        // Each node keeps links only to its two ring neighbours.
        for (let i = 0; i < ids.length; i++) {
          for (let j = 0; j < ids.length; j++) {
            const d = Math.abs(i - j);
            if (d > 1 && d < ids.length - 1) c.net.cutLink(ids[i] as NodeId, ids[j] as NodeId);
          }
        }
        text = `ring ${ids.join('-')}`;
        break;
      }
      case 'one-way': {
        const l = leader?.id ?? (ids[0] as NodeId);
        for (const x of ids) if (x !== l) c.net.cutLink(l, x);
        text = `node ${l} can hear but not be heard`;
        break;
      }
    }
    const ticks = between(this.rng, this.profile.partitionTicks);
    this.partitionEndsAt = c.now + ticks;
    c.fault(`partition-${shape}`, `${text} for ${ticks} ticks`);
  }

  /** One step at a time, keeping between max(3, n-1) and n+1 voters: add learner, promote, remove. */
  private changeMembership(): void {
    const c = this.cluster;
    const l = c.leader();
    if (l === undefined || c.now < this.membershipBusyUntil) return;
    const { voters, learners } = (l.raw as RawNode).status().config;
    const minVoters = Math.max(3, this.baseVoters - 1);
    let cc: ConfChange;
    const learner = pick(this.rng, learners);
    if (learner !== undefined) {
      cc = this.chance(0.8) ? { type: 'addNode', nodeId: learner } : { type: 'removeNode', nodeId: learner };
    } else if (voters.length > this.baseVoters || (voters.length > minVoters && this.chance(0.3))) {
      cc = { type: 'removeNode', nodeId: pick(this.rng, voters) as NodeId };
    } else {
      cc = { type: 'addLearner', nodeId: c.allocateNodeId() };
    }
    if (!c.proposeConfChange(cc)) return;
    this.membershipBusyUntil = c.now + 3 * c.cfg.raft.electionTick;
    c.fault(`member-${cc.type}`, `${cc.type}(${cc.nodeId}) proposed via leader ${l.id}`);
  }

  private transfer(): void {
    const c = this.cluster;
    const l = c.leader();
    if (l === undefined) return;
    const to = pick(this.rng, (l.raw as RawNode).status().config.voters.filter((v) => v !== l.id && upOrDown(c.nodes.get(v))));
    if (to === undefined || !c.transferLeader(to)) return;
    c.fault('leader-transfer', `leader ${l.id} -> ${to}`);
  }
}

function upOrDown(n: NemesisNode | undefined): boolean {
  return n !== undefined && n.status !== 'stopped';
}
