// Free TCP ports on the loopback for the processes the harness starts. A port is drawn at random below the
// kernel's ephemeral range, so no outgoing connection can take it while a killed member is down and must
// come back on the same port; each vitest worker (VITEST_POOL_ID), or else each process, draws from its own
// block, so test files running side by side rarely try the same one; and a port is never handed out twice
// by one process. Free means free now: a starter that loses the race to another program (EADDRINUSE)
// starts again on fresh ports (see store-cluster.ts).
import { readFileSync } from 'node:fs';
import net from 'node:net';

const BLOCKS = 16;
const LOWEST = 10_000;
const handedOut = new Set<number>();

/** The first port of the kernel's ephemeral range (Linux's default, 32768, where it cannot be read). */
function ephemeralStart(): number {
  try {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(first) && first > LOWEST + BLOCKS * 100 ? first : 32_768;
  } catch {
    return 32_768;
  }
}

function block(): { base: number; size: number } {
  const size = Math.floor((ephemeralStart() - LOWEST) / BLOCKS);
  const worker = process.env.VITEST_POOL_ID;
  const n = (worker !== undefined ? Number(worker) : process.pid) % BLOCKS;
  return { base: LOWEST + (Number.isInteger(n) ? n : 0) * size, size };
}

export async function freePort(host = '127.0.0.1'): Promise<number> {
  const { base, size } = block();
  for (let i = 0; i < size; i++) {
    const port = base + Math.floor(Math.random() * size);
    if (handedOut.has(port) || !(await canListen(port, host))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port in ${base}..${base + size - 1}`);
}

/** Several at once, by name: what a process kind asks for (e.g. client and peer). */
export async function freePorts<K extends string>(names: readonly K[], host = '127.0.0.1'): Promise<Record<K, number>> {
  const out = {} as Record<K, number>;
  for (const n of names) out[n] = await freePort(host);
  return out;
}

function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, host, () => s.close(() => resolve(true)));
  });
}
