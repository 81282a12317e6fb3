// The harness's model of the peer network: one rule per directed link (from member slot → to member
// slot). Nemeses change rules; proxies consult them for every chunk of bytes and hear about changes.
import { EventEmitter } from 'node:events';

export interface LinkRule {
  /** Blackhole: bytes on this link are swallowed while the connection is held open. */
  cut: boolean;
  delayMs: number;
  jitterMs: number;
  /** Probability that a chunk is "lost" and must wait for a TCP-like retransmission. */
  loss: number;
}

export const CLEAR: LinkRule = Object.freeze({ cut: false, delayMs: 0, jitterMs: 0, loss: 0 });

export class Network extends EventEmitter {
  private readonly rules = new Map<string, LinkRule>();

  constructor() {
    super();
    // One listener per proxy: 20 for five Setpoint members (a proxy per ordered pair), 30 with a spare.
    this.setMaxListeners(0);
  }

  rule(from: number, to: number): LinkRule {
    return this.rules.get(`${from}>${to}`) ?? CLEAR;
  }

  /** `cuts` lists directed links (from, to) to blackhole; every other cut is healed. */
  setCuts(cuts: [number, number][]): void {
    for (const [k, r] of this.rules) if (r.cut) this.rules.set(k, { ...r, cut: false });
    for (const [f, t] of cuts) this.rules.set(`${f}>${t}`, { ...this.rule(f, t), cut: true });
    this.emit('change');
  }

  /** Sets delay/loss on the given directed links (both directions should be passed for symmetry). */
  setQuality(links: [number, number][], q: { delayMs: number; jitterMs: number; loss: number }): void {
    for (const [f, t] of links) this.rules.set(`${f}>${t}`, { ...this.rule(f, t), ...q });
    this.emit('change');
  }

  healAll(): void {
    this.rules.clear();
    this.emit('change');
  }

  describe(): string {
    const parts: string[] = [];
    for (const [k, r] of this.rules) {
      if (r.cut) parts.push(`${k} cut`);
      else if (r.delayMs || r.loss) parts.push(`${k} ${r.delayMs}±${r.jitterMs}ms loss ${r.loss}`);
    }
    return parts.join(', ') || 'healthy';
  }
}
