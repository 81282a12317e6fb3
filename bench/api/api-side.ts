// One side of bench:api: a 3-member store cluster (Setpoint's or etcd 3.4) with its own `setpoint
// apiserver` process on it, and admin RestClients for the load. Everything it starts is stopped by close(),
// whatever happened before.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResourceClient } from '../../src/client/resource-client.js';
import { NAMESPACES } from '../../src/client/resource-types.js';
import { RestClient } from '../../src/client/rest-client.js';
import { startApiServerProcess, type ApiServerProcess } from '../../src/harness/apiserver-process.js';
import type { StoreProgram } from '../../src/harness/kinds/store-member.js';
import { StoreCluster } from '../../src/harness/store-cluster.js';

export interface ApiSide {
  readonly program: StoreProgram;
  readonly api: ApiServerProcess;
  /** A new admin client on its own HTTP/2 connection. */
  client(): RestClient;
  /** The API server's resident memory now (MiB), from /proc/<pid>/status. */
  rssMiB(): number;
  close(): Promise<void>;
}

export function rssMiBOf(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

export async function startSide(program: StoreProgram): Promise<ApiSide> {
  const dir = mkdtempSync(join(tmpdir(), `setpoint-bench-api-${program}-`));
  const clients: RestClient[] = [];
  let cluster: StoreCluster | undefined;
  let api: ApiServerProcess | undefined;
  const close = async (): Promise<void> => {
    for (const c of clients) c.close();
    await api?.stop();
    await cluster?.destroy();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    cluster = await StoreCluster.start({ program, dir: join(dir, 'store'), token: 'bench-api' });
    api = await startApiServerProcess({ dir, etcdServers: cluster.endpoints(), timeoutMs: 120_000 });
  } catch (e) {
    await close();
    throw e;
  }
  const started = api;
  return {
    program,
    api: started,
    client() {
      const c = new RestClient({ ...started.clientConfig, protocol: 'h2', timeoutMs: 60_000 });
      clients.push(c);
      return c;
    },
    rssMiB: () => rssMiBOf(started.process.pid),
    close,
  };
}

/** Makes the namespaces the phases use (each phase its own, so a LIST sees only its pods). */
export async function makeNamespaces(rest: RestClient, names: readonly string[]): Promise<void> {
  const ns = new ResourceClient(rest, NAMESPACES);
  for (const name of names) await ns.create({ metadata: { name } });
}

/** Runs f over 0..n-1 with at most `width` calls in flight. */
export async function forEachConcurrently(n: number, width: number, f: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) await f(next++);
  };
  await Promise.all(Array.from({ length: Math.min(width, n) }, worker));
}
