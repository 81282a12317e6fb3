// The history of a run, Jepsen-style: every client operation is an invocation followed by exactly one
// completion — ok (it happened), fail (it certainly did not), info (unknown: a timeout or lost
// connection; the process is then retired and its worker continues as a new process). Nemesis events
// sit in the same timeline. Times are milliseconds since the run started.

export type Outcome = 'ok' | 'fail' | 'info';

export interface OpRecord {
  id: number;
  /** Logical single-threaded process; a new one after every `info`. */
  process: number;
  /** The worker (a client loop) that ran it: one track of the timeline. */
  worker: number;
  /** The member slot the client talked to. */
  node: number;
  f: string;
  key?: string;
  input?: unknown;
  output?: unknown;
  outcome: Outcome;
  start: number;
  end: number;
  error?: string;
}

export interface FaultRecord {
  kind: string;
  detail: string;
  start: number;
  /** Undefined while the fault is active. */
  end?: number;
}

export interface HistoryLine {
  time: number;
  process: number | 'nemesis';
  type: 'invoke' | Outcome;
  f: string;
  key?: string;
  value?: unknown;
  error?: string;
  op?: number;
}

export class History {
  readonly ops: OpRecord[] = [];
  readonly faults: FaultRecord[] = [];
  /** Free-form harness notes (member exits, checker hints) with their times. */
  readonly notes: { time: number; text: string }[] = [];
  private nextId = 0;
  private readonly t0 = performance.now();

  now(): number {
    return performance.now() - this.t0;
  }

  newId(): number {
    return this.nextId++;
  }

  add(op: OpRecord): void {
    this.ops.push(op);
  }

  faultStart(kind: string, detail: string): FaultRecord {
    const f: FaultRecord = { kind, detail, start: this.now() };
    this.faults.push(f);
    return f;
  }

  faultEnd(f: FaultRecord, detail?: string): void {
    f.end = this.now();
    if (detail) f.detail = `${f.detail}; ${detail}`;
  }

  note(text: string): void {
    this.notes.push({ time: this.now(), text });
  }

  /** Invocation and completion lines plus fault start/stop lines, in time order. */
  lines(): HistoryLine[] {
    const out: HistoryLine[] = [];
    for (const o of this.ops) {
      const base = { process: o.process, f: o.f, op: o.id, ...(o.key === undefined ? {} : { key: o.key }) };
      out.push({ ...base, time: o.start, type: 'invoke', value: o.input });
      out.push({ ...base, time: o.end, type: o.outcome, value: o.output, ...(o.error ? { error: o.error } : {}) });
    }
    for (const f of this.faults) {
      out.push({ time: f.start, process: 'nemesis', type: 'info', f: `start-${f.kind}`, value: f.detail });
      if (f.end !== undefined) out.push({ time: f.end, process: 'nemesis', type: 'info', f: `stop-${f.kind}`, value: f.detail });
    }
    return out.sort((a, b) => a.time - b.time);
  }
}
