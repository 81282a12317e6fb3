// bench:api — issue 26's acceptance figures for the API server, on both stores in one run: a 3-member
// etcd 3.4 cluster and a 3-member Setpoint store cluster, each with its own `setpoint apiserver` process,
// driven through Setpoint's RestClient over HTTP/2 as an admin. The sides run one after the other, so
// neither competes with the other for the CPU; the bench client shares the machine with both.
// Smaller scale for development: `--pods 1000 --watchers 100 --ops 50` (see bench/api/bench-options.ts).
import { execFileSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import type { StoreProgram } from '../src/harness/kinds/store-member.js';
import { makeNamespaces, startSide } from './api/api-side.js';
import { describeOptions, parseOptions, type ApiBenchOptions } from './api/bench-options.js';
import { listPods, seedPods, type ListResult } from './api/list-latency.js';
import { paced, sequential, type PacedResult, type SequentialResult } from './api/request-latency.js';
import { fmt, pair } from './api/stats.js';
import { watchFanout, type FanoutResult } from './api/watch-fanout.js';
import { markdownTable } from './markdown-table.js';

interface SideResult {
  readonly seq: SequentialResult;
  readonly paced: readonly PacedResult[];
  readonly seedRate: number;
  readonly list: ListResult;
  readonly rssEmptyMiB: number;
  readonly rssPodsMiB: number;
  readonly fanout: FanoutResult;
}

const log = (side: string, m: string): void => void process.stderr.write(`[${side}] ${m}\n`);

async function measureSide(program: StoreProgram, o: ApiBenchOptions): Promise<SideResult> {
  log(program, 'starting a 3-member store cluster and an API server');
  const side = await startSide(program);
  try {
    const rest = side.client();
    await makeNamespaces(rest, ['bench-seq', 'bench-paced', 'bench-list', 'bench-watch']);
    log(program, `sequential: ${o.ops} creates, updates, gets`);
    const seq = await sequential(rest, 'bench-seq', o.ops);
    const pacedResults: PacedResult[] = [];
    const writers = Array.from({ length: 4 }, () => side.client());
    for (const rate of o.rates) {
      log(program, `paced writes at ${rate}/s for ${o.pacedSeconds} s`);
      pacedResults.push(await paced(writers, 'bench-paced', rate, o.pacedSeconds, String(rate)));
    }
    const rssEmptyMiB = side.rssMiB();
    log(program, `storing ${o.pods} pods`);
    const seedRate = await seedPods(writers, 'bench-list', o.pods);
    log(program, `LIST of ${o.pods} pods, ${o.listRuns} runs each`);
    const list = await listPods(rest, 'bench-list', o.pods, o.listRuns);
    const rssPodsMiB = side.rssMiB();
    log(program, `watch fan-out: ${o.watchers} watchers, ${o.updates} updates`);
    const fanout = await watchFanout(() => side.client(), 'bench-watch', { watchers: o.watchers, perClient: o.watchersPerClient, updates: o.updates, rate: o.updateRate });
    return { seq, paced: pacedResults, seedRate, list, rssEmptyMiB, rssPodsMiB, fanout };
  } finally {
    await side.close();
  }
}

function tableRows(o: ApiBenchOptions, results: ReadonlyMap<StoreProgram, SideResult>): string[][] {
  const names: Record<StoreProgram, string> = { etcd: 'etcd 3.4', setpoint: 'Setpoint store' };
  const cols = o.sides.map((s) => results.get(s));
  const row = (label: string, f: (r: SideResult) => string): string[] => [label, ...cols.map((r) => (r ? f(r) : '—'))];
  const rows: string[][] = [['3 members each, one `setpoint apiserver` each', ...o.sides.map((s) => names[s])]];
  rows.push(row(`create ConfigMap p50 / p99 (ms; ${o.ops} sequential)`, (r) => pair(r.seq.create)));
  rows.push(row(`update ConfigMap p50 / p99 (ms; ${o.ops} sequential)`, (r) => pair(r.seq.update)));
  rows.push(row(`get ConfigMap p50 / p99 (ms; ${o.ops} sequential)`, (r) => pair(r.seq.get)));
  o.rates.forEach((rate, i) => {
    rows.push(row(`mutating p50 / p99 at ${rate} writes/s (ms; SLO p99 ≤ 1000, target ≤ 50)`, (r) => pair(r.paced[i]?.latency)));
    rows.push(row(`  achieved rate at ${rate} writes/s (writes/s; errors)`, (r) => `${fmt(r.paced[i]?.achieved, 0)}; ${r.paced[i]?.errors ?? '—'}`));
  });
  rows.push(row(`pods stored (pods/s; 64 creates in flight)`, (r) => fmt(r.seedRate, 0)));
  rows.push(row(`LIST ${o.pods} pods from the cache, rv=0: p50 (ms; target ≤ 200)`, (r) => fmt(r.list.cache.p50, 0)));
  rows.push(row(`LIST ${o.pods} pods consistent, no rv: p50 (ms; target ≤ 200)`, (r) => fmt(r.list.consistent.p50, 0)));
  rows.push(row(`  LIST size (MiB)`, (r) => fmt(r.list.bytes / 1024 / 1024, 1)));
  rows.push(row(`watch delivery p50 / p99 (ms; ${o.watchers} watchers, ${o.updates} updates)`, (r) => pair(r.fanout.delivery)));
  rows.push(row(`  the same from the update's send (ms)`, (r) => pair(r.fanout.fromSend)));
  rows.push(row(`  events that beat the update's answer`, (r) => `${r.fanout.early}`));
  rows.push(row(`  events delivered / expected`, (r) => `${r.fanout.delivered} / ${r.fanout.expected}`));
  rows.push(row(`API server RSS, before the pods (MiB)`, (r) => fmt(r.rssEmptyMiB, 0)));
  rows.push(row(`API server RSS with ${o.pods} pods, after the LISTs (MiB)`, (r) => fmt(r.rssPodsMiB, 0)));
  rows.push(row(`API server memory per 10,000 pods (MiB; the difference, scaled)`, (r) => fmt(((r.rssPodsMiB - r.rssEmptyMiB) * 10_000) / o.pods, 0)));
  return rows;
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2), process.env);
  const etcdVersion = execFileSync('etcd', ['--version'], { encoding: 'utf8' }).split('\n')[0] ?? 'etcd';
  const cpu = cpus();
  const load = (): string => loadavg().map((x) => x.toFixed(2)).join(' ');
  console.log(`bench:api — ${new Date().toISOString()}`);
  console.log(`machine: ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${cpu.length} cores; node ${process.version}; ${etcdVersion}`);
  console.log(`scale: ${describeOptions(o)}`);
  console.log(`load average at start: ${load()}`);
  const results = new Map<StoreProgram, SideResult>();
  for (const s of o.sides) results.set(s, await measureSide(s, o));
  console.log(markdownTable(tableRows(o, results)));
  console.log(`load average at end: ${load()}`);
  console.log('Sequential: one request at a time on one HTTP/2 connection, after 50 untimed rounds. Paced: open-loop creates over 4 connections, latency from each request\'s scheduled time.');
  console.log('LIST: timed to the last byte of the body, not parsed. Watch: from the update\'s answer at the writer to the event at each watcher (an event that beat the answer counts as 0 ms; undelivered ones as never).');
  console.log('Memory: VmRSS of the API server process before the pods and after storing and LISTing them (its watch cache holds every pod); the difference scaled to 10,000 pods (at a small --pods this is mostly GC noise).');
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
