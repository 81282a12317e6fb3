// The run's memory: a ring buffer of the last events, shown when a check fails, and a hash over every
// event, which the determinism self-check compares between two runs of one seed. Message events keep
// the (immutable) message and are rendered only if they are shown, so tracing costs little.
import type { Message } from '../raft/types.js';
import { describeMessage } from '../raft/describe.js';
import { hashString, HASH_SEED, mixId, mixInt } from './hash.js';

export type MessageFate = 'deliver' | 'drop' | 'cut' | 'down';

interface TraceRecord {
  readonly tick: number;
  readonly text?: string;
  readonly msg?: Message;
  readonly fate?: MessageFate;
}

const FATE_CODE: Record<MessageFate, number> = { deliver: 1, drop: 2, cut: 3, down: 4 };

export class Trace {
  private readonly ring: (TraceRecord | undefined)[];
  private next = 0;
  private total = 0;
  private h = HASH_SEED;

  constructor(capacity = 60) {
    this.ring = new Array<TraceRecord | undefined>(capacity).fill(undefined);
  }

  get hash(): number {
    return this.h;
  }

  get events(): number {
    return this.total;
  }

  note(tick: number, text: string): void {
    this.h = hashString(text, mixInt(this.h, tick));
    this.push({ tick, text });
  }

  message(tick: number, fate: MessageFate, m: Message): void {
    let h = mixInt(this.h, tick);
    h = mixInt(h, FATE_CODE[fate]);
    h = hashString(m.type, h);
    h = mixId(mixId(h, m.from), m.to);
    h = mixInt(mixInt(h, m.term), m.index);
    h = mixInt(mixInt(h, m.logTerm), m.commit);
    h = mixInt(mixInt(h, m.entries.length), m.reject ? 1 : 0);
    this.h = h;
    this.push({ tick, msg: m, fate });
  }

  /** The last events, oldest first, one readable line each. */
  lines(): string[] {
    const out: string[] = [];
    const n = this.ring.length;
    for (let i = 0; i < n; i++) {
      const r = this.ring[(this.next + i) % n];
      if (r === undefined) continue;
      const tick = `t=${String(r.tick).padStart(5)}`;
      if (r.msg) out.push(`${tick} ${r.fate === 'deliver' ? '' : `(${r.fate}) `}${describeMessage(r.msg)}`);
      else out.push(`${tick} ${r.text ?? ''}`);
    }
    return out;
  }

  private push(r: TraceRecord): void {
    this.ring[this.next] = r;
    this.next = (this.next + 1) % this.ring.length;
    this.total++;
  }
}
