// Pod addresses without root: every pod gets its own loopback address from 127.1.0.0/16 (Linux routes
// the whole of 127/8 to lo), so replicas can all listen on their containerPort. Allocations are persisted
// so an agent restart gives adopted pods the addresses they already have; a freed address is handed out
// again only after the rest of the range (next-fit), so a stale client rarely reaches a new pod.
import { existsSync, readFileSync } from 'node:fs';
import { AgentError } from './agent-error.js';
import { writeFileAtomic } from './atomic-file.js';

const FIRST = 1; // 127.1.0.0 is the network's own address
const LAST = 0xfffe; // and 127.1.255.255 its broadcast

function toIP(n: number): string {
  return `127.1.${n >> 8}.${n & 0xff}`;
}

function fromIP(ip: string): number | undefined {
  const m = /^127\.1\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!m) return undefined;
  const hi = Number(m[1]);
  const lo = Number(m[2]);
  if (hi > 255 || lo > 255) return undefined;
  const n = (hi << 8) | lo;
  return n >= FIRST && n <= LAST ? n : undefined;
}

interface Persisted {
  next: number;
  byOwner: Record<string, string>;
}

export class IPAllocator {
  private readonly byOwner = new Map<string, number>();
  private readonly used = new Set<number>();
  private next = FIRST;

  private readonly first: number;
  private readonly size: number;

  /**
   * `file` holds the allocations. `range` confines them to a block of the /16 (offset from 127.1.0.1 and
   * a size): agents sharing one host (`setpoint up`) each take their own block, as nodes take podCIDRs.
   */
  constructor(
    private readonly file: string,
    range: { readonly offset: number; readonly size: number } = { offset: 0, size: LAST - FIRST + 1 },
  ) {
    this.first = FIRST + Math.max(0, Math.min(range.offset, LAST - FIRST));
    this.size = Math.max(1, Math.min(range.size, LAST - this.first + 1));
    this.next = this.first;
    if (!existsSync(file)) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new AgentError('AGENT_BAD_STATE_FILE', `cannot read the address allocations in ${file}: ${(err as Error).message}`);
    }
    const p = parsed as Partial<Persisted>;
    if (typeof p.next === 'number' && p.next >= this.first && p.next < this.first + this.size) this.next = p.next;
    for (const [owner, ip] of Object.entries(p.byOwner ?? {})) {
      const n = typeof ip === 'string' ? fromIP(ip) : undefined;
      if (n === undefined) continue; // a foreign line is dropped rather than trusted
      this.byOwner.set(owner, n);
      this.used.add(n);
    }
  }

  /** The owner's address: the one it has, or a new one. */
  allocate(owner: string): string {
    const have = this.byOwner.get(owner);
    if (have !== undefined) return toIP(have);
    for (let i = 0; i < this.size; i++) {
      const n = this.first + ((this.next - this.first + i) % this.size);
      if (this.used.has(n)) continue;
      this.used.add(n);
      this.byOwner.set(owner, n);
      this.next = this.first + ((n - this.first + 1) % this.size);
      this.save();
      return toIP(n);
    }
    throw new AgentError('AGENT_IP_EXHAUSTED', `no free pod address in ${toIP(this.first)}-${toIP(this.first + this.size - 1)} (${this.used.size} in use)`);
  }

  release(owner: string): void {
    const n = this.byOwner.get(owner);
    if (n === undefined) return;
    this.byOwner.delete(owner);
    this.used.delete(n);
    this.save();
  }

  lookup(owner: string): string | undefined {
    const n = this.byOwner.get(owner);
    return n === undefined ? undefined : toIP(n);
  }

  owners(): string[] {
    return [...this.byOwner.keys()];
  }

  private save(): void {
    const byOwner: Record<string, string> = {};
    for (const [o, n] of this.byOwner) byOwner[o] = toIP(n);
    writeFileAtomic(this.file, JSON.stringify({ next: this.next, byOwner } satisfies Persisted));
  }
}
