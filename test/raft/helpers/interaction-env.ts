// Command handlers for the interaction scripts (test/raft/interaction/*.txt). Each command drives the
// in-memory cluster and returns what happened as text: Readies, delivered messages, role changes and errors.
// The command set is described in test/raft/interaction/README.md.
import type { ConfChangeType, ConfState, Message, NodeId } from '../../../src/raft/types.js';
import type { Delivery, ReadyEvent } from './cluster.js';
import { Cluster, DEFAULT_OPTIONS, bytes, type NodeOptions } from './cluster.js';
import { MemoryStorage, bootstrapStorage } from '../../../src/raft/storage.js';
import { RaftError } from '../../../src/raft/errors.js';
import { describeEntry, describeMessage, describeReady, describeSnapshot } from '../../../src/raft/describe.js';
import { type Command, parseCommand, parseId, parseIds, parseInt10 } from './script.js';
import { compareNodeIds } from '../../../src/raft/types.js';

export function showIds(ids: readonly NodeId[]): string {
  return `(${[...ids].sort(compareNodeIds).join(',')})`;
}

export function showConfState(cs: ConfState): string {
  return cs.learners.length > 0 ? `voters=${showIds(cs.voters)} learners=${showIds(cs.learners)}` : `voters=${showIds(cs.voters)}`;
}

const CONF_CHANGE_VERBS: Record<string, ConfChangeType> = {
  'add-node': 'addNode',
  'add-learner': 'addLearner',
  'remove-node': 'removeNode',
};

/** Role and term: what a reader of a trace needs to see change. */
interface RoleSnapshot {
  readonly state: string;
  readonly term: number;
}

export class InteractionEnv {
  cluster = new Cluster(1, DEFAULT_OPTIONS);

  run(line: string): string[] {
    const cmd = parseCommand(line);
    const handler = this.handlers[cmd.verb];
    if (!handler) throw new Error(`unknown command '${cmd.verb}'`);
    return handler(cmd);
  }

  private readonly handlers: Record<string, (c: Command) => string[]> = {
    'add-nodes': (c) => this.addNodes(c),
    campaign: (c) => this.observe(() => this.raw(c, 0).campaign()),
    propose: (c) => this.observe(() => this.raw(c, 0).propose(bytes(this.arg(c, 1)))),
    'propose-conf-change': (c) => {
      const type = CONF_CHANGE_VERBS[this.arg(c, 1)];
      if (!type) throw new Error(`conf change must be one of ${Object.keys(CONF_CHANGE_VERBS).join(', ')}`);
      return this.observe(() => this.raw(c, 0).proposeConfChange({ type, nodeId: this.id(c, 2) }));
    },
    'read-index': (c) => this.observe(() => this.raw(c, 0).readIndex(bytes(this.arg(c, 1)))),
    'transfer-leader': (c) => this.observe(() => this.raw(c, 0).transferLeader(this.id(c, 1))),
    'report-snapshot': (c) => {
      const ok = this.arg(c, 2);
      if (ok !== 'ok' && ok !== 'failed') throw new Error('report-snapshot <leader> <follower> ok|failed');
      return this.observe(() => this.raw(c, 0).reportSnapshot(this.id(c, 1), ok === 'ok'));
    },
    'report-unreachable': (c) => this.observe(() => this.raw(c, 0).reportUnreachable(this.id(c, 1))),
    tick: (c) => this.observe(() => this.cluster.tick(this.id(c, 0), c.args[1] === undefined ? 1 : parseInt10(c.args[1], 'tick count'))),
    'tick-heartbeat': (c) => this.observe(() => this.cluster.tick(this.id(c, 0), this.options(this.id(c, 0)).heartbeatTick)),
    'tick-election': (c) => this.observe(() => this.tickElection(this.id(c, 0))),
    'process-ready': (c) => this.ids(c).flatMap((id) => this.processReady(id)),
    'deliver-msgs': (c) => this.deliverMsgs(c),
    stabilize: (c) => this.stabilize(c),
    partition: (c) => {
      this.cluster.partition(...c.args.map(parseIds));
      return ['ok'];
    },
    isolate: (c) => {
      this.cluster.isolate(this.id(c, 0));
      return ['ok'];
    },
    drop: (c) => {
      this.cluster.cut(parseId(c.opts.get('from'), 'from'), parseId(c.opts.get('to'), 'to'));
      return ['ok'];
    },
    heal: () => {
      this.cluster.heal();
      return ['ok'];
    },
    status: (c) => this.ids(c).flatMap((id) => this.status(id)),
    'raft-log': (c) => this.raftLog(this.id(c, 0)),
    compact: (c) => {
      const id = this.id(c, 0);
      const snap = this.cluster.compact(id, parseInt10(c.args[1], 'compact index'));
      return [`${id} compacted; snapshot ${describeSnapshot(snap)}`];
    },
    restart: (c) => {
      const id = this.id(c, 0);
      this.cluster.get(id).restart();
      return this.status(id).slice(0, 1);
    },
    pending: () => {
      const ms = this.cluster.inflight.map(describeMessage);
      return ms.length > 0 ? ms : ['none'];
    },
  };

  // ---- argument helpers ----

  private arg(c: Command, i: number): string {
    const a = c.args[i];
    if (a === undefined) throw new Error(`${c.verb}: missing argument ${i + 1}`);
    return a;
  }

  private id(c: Command, i: number): NodeId {
    return parseId(this.arg(c, i), `${c.verb} argument ${i + 1}`);
  }

  /** All positional arguments as ids, or every node when there are none. */
  private ids(c: Command): NodeId[] {
    return c.args.length > 0 ? c.args.flatMap(parseIds) : this.cluster.ids();
  }

  private raw(c: Command, i: number) {
    return this.cluster.raw(this.id(c, i));
  }

  private options(id: NodeId): { electionTick: number; heartbeatTick: number } {
    const o = this.cluster.get(id).options;
    return { electionTick: o.electionTick ?? 10, heartbeatTick: o.heartbeatTick ?? 1 };
  }

  // ---- observation ----

  private roles(): Map<NodeId, RoleSnapshot> {
    const m = new Map<NodeId, RoleSnapshot>();
    for (const id of this.cluster.ids()) {
      const st = this.cluster.raw(id).status();
      m.set(id, { state: st.softState.raftState, term: st.hardState.term });
    }
    return m;
  }

  private roleChanges(before: Map<NodeId, RoleSnapshot>): string[] {
    const out: string[] = [];
    for (const [id, now] of this.roles()) {
      const was = before.get(id);
      if (!was || was.state !== now.state || was.term !== now.term) out.push(`${id} became ${now.state} at term ${now.term}`);
    }
    return out;
  }

  /** Runs an input; prints role changes it caused, or the RaftError it raised, or `ok`. */
  private observe(fn: () => void): string[] {
    const before = this.roles();
    try {
      fn();
    } catch (e) {
      if (!(e instanceof RaftError) || e.code === 'RAFT_INVARIANT') throw e;
      const hint = e.code === 'RAFT_PROPOSAL_DROPPED' ? ` (leader hint ${e.leaderHint})` : '';
      return [...this.roleChanges(before), `error ${e.code}${hint}: ${e.message}`];
    }
    const changes = this.roleChanges(before);
    return changes.length > 0 ? changes : ['ok'];
  }

  // ---- commands ----

  private addNodes(c: Command): string[] {
    const n = parseInt10(this.arg(c, 0), 'add-nodes count');
    const voters = c.opts.has('voters') ? parseIds(c.opts.get('voters') ?? '') : [];
    const learners = c.opts.has('learners') ? parseIds(c.opts.get('learners') ?? '') : [];
    const bool = (k: string): boolean | undefined => (c.opts.has(k) ? c.opts.get(k) === 'true' : undefined);
    const num = (k: string): number | undefined => (c.opts.has(k) ? parseInt10(c.opts.get(k), k) : undefined);
    const picked: Array<[keyof NodeOptions, unknown]> = [
      ['preVote', bool('prevote')],
      ['checkQuorum', bool('checkquorum')],
      ['disableProposalForwarding', bool('forwarding') === undefined ? undefined : !bool('forwarding')],
      ['electionTick', num('election')],
      ['heartbeatTick', num('heartbeat')],
      ['maxInflightMsgs', num('max-inflight')],
      ['maxSizePerMsg', num('max-msg-size')],
      ['maxUncommittedEntriesSize', num('max-uncommitted')],
    ];
    const options = Object.fromEntries(picked.filter(([, v]) => v !== undefined)) as NodeOptions;
    const first = this.cluster.ids().reduce((m, id) => (id > m ? id : m), 0n) + 1n;
    const out: string[] = [];
    for (let id = first; id < first + BigInt(n); id++) {
      // With a configuration, a member of a new cluster; without one, a member that will join via snapshot.
      const storage = voters.length > 0 ? bootstrapStorage(voters, learners) : new MemoryStorage();
      this.cluster.add(id, storage, options);
      out.push(...this.status(id).slice(0, 1));
    }
    return out;
  }

  private tickElection(id: NodeId): void {
    const { electionTick } = this.options(id);
    const raw = this.cluster.raw(id);
    if (raw.status().softState.raftState === 'leader') {
      // One election timeout: a leader checks its quorum and gives up a stalled transfer at this point.
      this.cluster.tick(id, electionTick);
      return;
    }
    // The randomized timeout lies in [E, 2E): tick until it fires once, which resets the elapsed count
    // (a member that cannot campaign, like a learner, just ticks 2E times).
    for (let i = 0; i < 2 * electionTick; i++) {
      raw.tick();
      if (raw.raft.electionElapsed === 0) return;
    }
  }

  private readyLines(id: NodeId, ev: ReadyEvent, before: Map<NodeId, RoleSnapshot>): string[] {
    const out = describeReady(ev.ready).split('\n');
    for (const { cc, confState } of ev.confChanges) {
      out.push(`applied ${cc.type}(${cc.nodeId}): ${showConfState(confState)}`);
    }
    out.push(...this.roleChanges(before).filter((l) => l.startsWith(`${id} `)));
    return out;
  }

  private processReady(id: NodeId): string[] {
    const before = this.roles();
    const ev = this.cluster.processReady(id);
    if (!ev) return [`> ${id} has no ready`];
    return [`> ${id} ready`, ...this.readyLines(id, ev, before).map((l) => `  ${l}`)];
  }

  private deliveryLines(id: NodeId, ds: readonly Delivery[], before: Map<NodeId, RoleSnapshot>): string[] {
    const out = [`> ${id} receives`];
    for (const d of ds) {
      if (d.dropped !== undefined) {
        out.push(`  ${describeMessage(d.message)} (dropped: ${d.dropped})`);
        continue;
      }
      out.push(`  ${describeMessage(d.message)}`);
      if (d.error !== undefined) out.push(`    error ${d.error}`);
    }
    // Role changes are reported per delivery batch: the core does not say which message caused them.
    out.push(...this.roleChanges(before).filter((l) => l.startsWith(`${id} `)).map((l) => `  ${l}`));
    return out;
  }

  private deliverMsgs(c: Command): string[] {
    const type = c.opts.get('type');
    const from = c.opts.has('from') ? parseId(c.opts.get('from'), 'from') : undefined;
    const filter = (m: Message): boolean => (type === undefined || m.type === type) && (from === undefined || m.from === from);
    if (c.opts.has('drop')) {
      const gone = parseIds(c.opts.get('drop') ?? '').flatMap((id) => this.cluster.dropQueued(id, filter));
      return gone.length > 0 ? gone.map((m) => `dropped ${describeMessage(m)}`) : ['no messages'];
    }
    const out: string[] = [];
    for (const id of this.ids(c)) {
      if (!this.cluster.inflight.some((m) => m.to === id && filter(m))) continue;
      const before = this.roles();
      out.push(...this.deliveryLines(id, this.cluster.deliver(id, filter), before));
    }
    return out.length > 0 ? out : ['no messages'];
  }

  private stabilize(c: Command): string[] {
    const out: string[] = [];
    let before = this.roles();
    this.cluster.stabilize(this.ids(c), (step) => {
      if (step.kind === 'ready') out.push(`> ${step.id} ready`, ...this.readyLines(step.id, step.event, before).map((l) => `  ${l}`));
      else out.push(...this.deliveryLines(step.id, step.deliveries, before));
      before = this.roles();
    });
    return out.length > 0 ? out : ['ok'];
  }

  private status(id: NodeId): string[] {
    const node = this.cluster.get(id);
    const st = node.raw.status();
    const hs = st.hardState;
    let head = `${id}: ${st.softState.raftState} term=${hs.term} vote=${hs.vote} lead=${st.softState.lead} commit=${hs.commit} applied=${st.applied} last=${st.lastIndex} ${showConfState(st.config)}`;
    if (st.leadTransferee !== 0n) head += ` transferee=${st.leadTransferee}`;
    const out = [head];
    for (const [pid, pr] of st.progress) {
      const flags = [pr.isLearner ? ' learner' : '', pr.recentActive ? '' : ' inactive'].join('');
      out.push(`  ${pid}: ${pr.state} match=${pr.match} next=${pr.next}${flags}`);
    }
    const data = node.appliedData();
    if (data.length > 0) out.push(`  applied data: ${data.join(' ')}`);
    const reads = node.readStates;
    if (reads.length > 0) out.push(`  read states: ${reads.map((r) => `${new TextDecoder().decode(r.requestCtx)}@${r.index}`).join(' ')}`);
    return out;
  }

  private raftLog(id: NodeId): string[] {
    const s = this.cluster.get(id).storage;
    const hs = s.getHardState();
    const out = [`hard state: term=${hs.term} vote=${hs.vote} commit=${hs.commit}`, `snapshot: ${describeSnapshot(s.snapshot())}`];
    if (s.lastIndex() >= s.firstIndex()) {
      for (const e of s.entries(s.firstIndex(), s.lastIndex() + 1, Infinity)) out.push(describeEntry(e));
    } else {
      out.push('no entries');
    }
    return out;
  }
}
