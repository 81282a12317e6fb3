// The contract between the runner and a workload, and the worker handle that records operations:
// pacing to the requested rate, choosing the member a worker talks to, classifying failures
// (reads that fail did nothing; writes that fail ambiguously are `info` and retire the process).
import type { Cluster } from './cluster.js';
import { EtcdClient, errorText, isDefiniteFailure } from './etcd-client.js';
import type { History, OpRecord, Outcome } from './history.js';
import type { CheckResult } from './checkers/result.js';
import type { SeededRng } from '../../src/raft/rng.js';

export interface RunContext {
  cluster: Cluster;
  history: History;
  /** Per-request deadline, ms. */
  timeoutMs: number;
  /** Emulates a stale-read bug with serializable (member-local) reads: a checker self-test. */
  serializableReads: boolean;
  rng: SeededRng;
  stopping: () => boolean;
  nodes: number;
  /** Time the checkers may spend searching before answering unknown, ms. */
  checkBudgetMs: number;
}

export interface Workload {
  name: string;
  /** Concurrency override (otherwise the runner's). */
  concurrency?: (requested: number) => number;
  /** Before any worker starts (e.g. the revision watchers start from). */
  setup?(ctx: RunContext): Promise<void>;
  worker(w: WorkerHandle): Promise<void>;
  /** Runs beside the workers (watchers); must return once ctx.stopping() turns true. */
  background?(ctx: RunContext): Promise<void>;
  /** After the workers stopped and the cluster healed: final reads. */
  finish(ctx: RunContext): Promise<void>;
  check(ctx: RunContext): Promise<CheckResult[]>;
  /** Extra data for the report directory (file name → JSON value). */
  artifacts?(): Record<string, unknown>;
}

export type OpFn = (c: EtcdClient) => Promise<{ outcome: Outcome; output?: unknown }>;

export class WorkerHandle {
  process: number;
  private readonly clients = new Map<number, EtcdClient>();
  private nextAt: number;

  constructor(
    readonly index: number,
    readonly rng: SeededRng,
    private readonly ctx: RunContext,
    /** Mean ms between this worker's operations. */
    private readonly intervalMs: number,
    private readonly endAt: number,
    private readonly newProcess: () => number,
  ) {
    this.process = newProcess();
    this.nextAt = ctx.history.now() + rng.float() * intervalMs;
  }

  get timeoutMs(): number {
    return this.ctx.timeoutMs;
  }

  get serializableReads(): boolean {
    return this.ctx.serializableReads;
  }

  stopping(): boolean {
    return this.ctx.stopping() || this.ctx.history.now() >= this.endAt;
  }

  /** The member this worker talks to: its own slot while that is a member, else the next member. */
  node(): number {
    const slots = this.ctx.cluster.slots;
    const pinned = this.index % this.ctx.nodes;
    for (let d = 0; d < slots.length; d++) {
      const s = slots[(pinned + d) % slots.length]!;
      if (s.member) return s.index;
    }
    return pinned;
  }

  client(node = this.node()): EtcdClient {
    let c = this.clients.get(node);
    if (!c) {
      c = new EtcdClient(this.ctx.cluster.endpoint(node));
      this.clients.set(node, c);
    }
    return c;
  }

  /** Waits for this worker's next slot at the requested rate; false once the run is over. */
  async pace(): Promise<boolean> {
    const now = this.ctx.history.now();
    const wait = this.nextAt - now;
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    // If an operation ran long, do not burst to catch up: the rate is an offered load, not a debt.
    this.nextAt = Math.max(this.nextAt, this.ctx.history.now()) + this.intervalMs * (0.5 + this.rng.float());
    return !this.stopping();
  }

  /** Runs one operation and records it. `kind` decides how an error is classified. */
  async invoke(f: string, key: string | undefined, input: unknown, kind: 'read' | 'write', fn: OpFn): Promise<OpRecord> {
    const node = this.node();
    const h = this.ctx.history;
    const start = h.now();
    let outcome: Outcome;
    let output: unknown;
    let error: string | undefined;
    try {
      const r = await fn(this.client(node));
      outcome = r.outcome;
      output = r.output;
    } catch (e) {
      error = errorText(e);
      outcome = kind === 'read' || isDefiniteFailure(e) ? 'fail' : 'info';
    }
    const rec: OpRecord = {
      id: h.newId(),
      process: this.process,
      worker: this.index,
      node,
      f,
      ...(key === undefined ? {} : { key }),
      ...(input === undefined ? {} : { input }),
      ...(output === undefined ? {} : { output }),
      outcome,
      start,
      end: h.now(),
      ...(error === undefined ? {} : { error }),
    };
    h.add(rec);
    // Jepsen's rule: after an unknown outcome the process may still be "in" that operation, so it is
    // retired and the worker continues as a fresh single-threaded process.
    if (outcome === 'info') this.process = this.newProcess();
    return rec;
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
  }
}
