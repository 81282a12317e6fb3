// bench:txn — the API server's write, straight at the store: a Txn that creates an object only if it is
// absent (compare mod_revision = 0, put the object, put its history record), sent by the control plane's own
// etcd client to the leader of three members, etcd 3.4 and Setpoint side by side, in alternating rounds.
// First sequentially (one at a time), then open-loop at a paced rate over four connections, latency taken
// from each request's scheduled time. Beside each round: the CPU each member spent per write (from /proc),
// which a loaded machine distorts far less than it distorts latency.
//
// It exists to take the API server out of bench:api's paced-write gap (docs/benchmarks.md). Options
// (argv or environment): --rounds (BENCH_TXN_ROUNDS, 2), --rate (BENCH_TXN_RATE, 100), --seconds
// (BENCH_TXN_SECONDS, 15), --sides (BENCH_TXN_SIDES, etcd,setpoint), and --setpoint-node-args
// (BENCH_TXN_SETPOINT_NODE_ARGS): extra Node options for Setpoint's members, as one more side named after
// them (A/B of a V8 flag), e.g. --setpoint-node-args=--interrupt-budget=8192.
import { loadavg } from 'node:os';
import { EtcdClient } from '../src/etcd-client/etcd-client.js';
import { StoreCluster } from '../src/harness/store-cluster.js';
import { fromArgv } from './api/bench-options.js';
import { fmt, latencies, percentile, type Latencies } from './api/stats.js';
import { markdownTable } from './markdown-table.js';
import { processCost } from './process-cost.js';

interface Side {
  readonly label: string;
  readonly program: 'etcd' | 'setpoint';
  readonly nodeArgs?: readonly string[];
}

interface Round {
  readonly side: string;
  readonly seq: Latencies;
  readonly paced: Latencies;
  readonly pacedMax: number;
  /** CPU ms per paced write, the leader first. */
  readonly cpuPerWrite: readonly number[];
  readonly load: number;
}

function option(argv: readonly string[], name: string, fallback: string): string {
  return fromArgv(argv, name) ?? process.env[`BENCH_TXN_${name.replace(/-/g, '_').toUpperCase()}`] ?? fallback;
}

const VALUE = 'x'.repeat(1500);
const HISTORY = 'h'.repeat(300);

async function runRound(side: Side, rate: number, seconds: number): Promise<Round> {
  const c = await StoreCluster.start({ program: side.program, label: `bench-txn-${side.program}-`, ...(side.nodeArgs ? { nodeArgs: side.nodeArgs } : {}) });
  const clients: EtcdClient[] = [];
  try {
    const leader = await c.waitForLeader();
    for (let i = 0; i < 4; i++) clients.push(new EtcdClient({ endpoints: [c.clientUrl(leader)] }));
    let n = 0;
    const write = async (cl: EtcdClient): Promise<number> => {
      const key = `/registry/configmaps/bench/o${n++}`;
      const t0 = performance.now();
      await cl.txn({ compare: [{ key, target: 'MOD', result: 'EQUAL', revision: 0 }], success: [{ put: { key, value: VALUE } }, { put: { key: `${key}/history`, value: HISTORY } }] });
      return performance.now() - t0;
    };
    const first = clients[0] as EtcdClient;
    for (let i = 0; i < 100; i++) await write(first);
    const seq: number[] = [];
    for (let i = 0; i < 300; i++) seq.push(await write(first));

    const names = [leader, ...c.names().filter((m) => m !== leader)];
    const cpu = (): number[] => names.map((m) => processCost(c.get(m).process?.pid).cpuS);
    const before = cpu();
    const total = Math.round(rate * seconds);
    const paced: number[] = [];
    const inFlight: Promise<void>[] = [];
    const start = performance.now();
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      inFlight.push(write(clients[i % clients.length] as EtcdClient).then(() => void paced.push(performance.now() - due)));
    }
    await Promise.all(inFlight);
    const after = cpu();
    return { side: side.label, seq: latencies(seq), paced: latencies(paced), pacedMax: percentile(paced, 1), cpuPerWrite: after.map((v, i) => ((v - (before[i] ?? 0)) * 1000) / total), load: loadavg()[0] ?? 0 };
  } finally {
    for (const cl of clients) cl.close();
    await c.destroy();
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const rounds = Number(option(argv, 'rounds', '2'));
  const rate = Number(option(argv, 'rate', '100'));
  const seconds = Number(option(argv, 'seconds', '15'));
  const programs = option(argv, 'sides', 'etcd,setpoint').split(',').map((s) => s.trim()) as ('etcd' | 'setpoint')[];
  const extra = option(argv, 'setpoint-node-args', '').split(' ').filter(Boolean);
  const sides: Side[] = programs.map((p) => ({ label: p === 'etcd' ? 'etcd 3.4' : 'Setpoint', program: p }));
  if (extra.length > 0) sides.push({ label: `Setpoint ${extra.join(' ')}`, program: 'setpoint', nodeArgs: extra });
  console.error(`bench:txn: ${rounds} rounds of ${sides.map((s) => s.label).join(' / ')}; 300 sequential writes, then ${rate} writes/s for ${seconds} s; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const results: Round[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const side of sides) {
      const round = await runRound(side, rate, seconds);
      console.error(`[${side.label}] round ${r + 1}: paced p50 ${fmt(round.paced.p50)} p99 ${fmt(round.paced.p99)} ms`);
      results.push(round);
    }
  }
  const rows: string[][] = [['round', 'side', 'sequential p50 / p99 (ms)', `paced ${rate}/s p50 / p99 / max (ms)`, 'CPU ms per write: leader, followers', 'load average']];
  results.forEach((x, i) =>
    rows.push([
      String(Math.floor(i / sides.length) + 1),
      x.side,
      `${fmt(x.seq.p50)} / ${fmt(x.seq.p99)}`,
      `${fmt(x.paced.p50)} / ${fmt(x.paced.p99)} / ${fmt(x.pacedMax)}`,
      x.cpuPerWrite.map((v) => v.toFixed(2)).join(', '),
      x.load.toFixed(1),
    ]),
  );
  console.log(markdownTable(rows));
  console.log('CPU from /proc at 10 ms resolution (user + system, every thread of the member); latency from the client in this process.');
}

await main();
