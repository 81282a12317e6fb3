// bench:etcd — Setpoint's store against etcd 3.4 on this machine, in one run and one table: etcdctl's own
// `check perf` (loads m and l), linearizable and serializable reads/s, watch event latency with 1000
// watchers on one prefix under a steady write rate, and the write gap when the leader is SIGKILLed.
// Each side is a 3-member cluster of real processes started with the same etcd flags (default heartbeat
// and election timeout), data in a temp dir on the same disk; the sides run one after the other, so
// neither competes with the other for the CPU. The load generators are the same code for both, on raw
// gRPC with pre-encoded requests and undecoded responses, so the client costs as little as it can.
// `--quick` skips check perf and shortens the rest (for development).
import { execFileSync } from 'node:child_process';
import * as http2 from 'node:http2';
import { cpus, loadavg, tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Client, credentials, Metadata } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { frameMessages, MessageReader } from '../src/server/grpc/coalesce.js';
import { etcdctl } from '../src/harness/etcdctl.js';
import type { StoreProgram as Flavor } from '../src/harness/kinds/store-member.js';
import { StoreCluster } from '../src/harness/store-cluster.js';
import { waitFor } from '../src/harness/wait.js';
import { markdownTable } from './markdown-table.js';

const QUICK = process.argv.includes('--quick');
/** `--only=reads,watch,failover,perf`: run only those parts (development). */
const ONLY = new Set((process.argv.find((a) => a.startsWith('--only='))?.slice(7) ?? 'perf,reads,watch,failover').split(','));
/** `--side=setpoint` or `--side=etcd`: measure one side only (development; the table shows — for the other). */
const SIDES = (process.argv.find((a) => a.startsWith('--side='))?.slice(7) ?? 'etcd,setpoint').split(',');
const READ_MS = QUICK ? 3000 : 10_000;
const READ_WARMUP_MS = 1000;
/** Connections per member and calls in flight per connection for the read load. */
const READ_CONNS_PER_MEMBER = 8;
const READ_INFLIGHT_PER_CONN = 16;
const WATCHERS = Number(process.env.BENCH_WATCHERS ?? 1000);
const WATCH_STREAMS = 20;
const WATCH_WRITES_PER_S = 200;
const WATCH_MS = QUICK ? 3000 : 10_000;
/**
 * Writes at the same rate before the measured ones, their events not timed: both sides start warm (JIT,
 * buffers, windows). Two seconds was not enough for either: on one cluster, a second 10 s measurement
 * right after the first gave p99s of a third to a half of the first's, on etcd as on Setpoint.
 */
const WATCH_WARMUP_MS = QUICK ? 2000 : 10_000;
const FAILOVER_TRIALS = QUICK ? 1 : 7;
/**
 * check perf --load=l and the watch phase run this many rounds, etcd and Setpoint taking turns, each round
 * on fresh clusters; the table shows the median round. On a shared 2-core machine one run of either
 * swung by ±30% from minute to minute, on both sides.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3));
const FAILOVER_WRITE_EVERY_MS = 10;
/** `BENCH_KEEP=1`: keep each cluster's directory, member logs included, and say where (development). */
const KEEP = process.env.BENCH_KEEP === '1';

// ---- a minimal protobuf writer and reader, for pre-encoded requests and cheap response checks ----

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 127) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}

function bytesField(field: number, b: Buffer): Buffer {
  return Buffer.concat([varint((field << 3) | 2), varint(b.length), b]);
}

function boolField(field: number, v: boolean): Buffer {
  return v ? Buffer.concat([varint(field << 3), varint(1)]) : Buffer.alloc(0);
}

function encodeRange(key: string, serializable: boolean): Buffer {
  return Buffer.concat([bytesField(1, Buffer.from(key)), boolField(7, serializable)]);
}

function encodePut(key: string, value: Buffer | string): Buffer {
  return Buffer.concat([bytesField(1, Buffer.from(key)), bytesField(2, Buffer.from(value))]);
}

function encodeWatchCreate(key: string, rangeEnd: string): Buffer {
  return bytesField(1, Buffer.concat([bytesField(1, Buffer.from(key)), bytesField(2, Buffer.from(rangeEnd))]));
}

/** The varint fields at the top level of a message (length-delimited ones are skipped). */
function topVarints(buf: Buffer): Map<number, number> {
  const out = new Map<number, number>();
  let i = 0;
  const read = (): number => {
    let n = 0;
    let mul = 1;
    for (;;) {
      const b = buf[i++] as number;
      n += (b & 0x7f) * mul;
      if (b < 0x80) return n;
      mul *= 128;
    }
  };
  while (i < buf.length) {
    const tag = read();
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (wire === 0) out.set(field, read());
    else if (wire === 2) {
      // Not `i += read()`: that adds to the value i had before read() moved it.
      const len = read();
      i += len;
    }
    else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else break;
  }
  return out;
}

// ---- gRPC plumbing ----

const identity = (b: Buffer): Buffer => b;
const hostOf = (url: string): string => url.replace(/^https?:\/\//, '');

/** A client on its own TCP connection (grpc-js shares subchannels between clients unless told not to). */
function rawClient(url: string): Client {
  return new Client(hostOf(url), credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1, 'grpc.max_receive_message_length': -1 });
}

function ready(c: Client): Promise<void> {
  return new Promise((resolve, reject) => c.waitForReady(Date.now() + 10_000, (e) => (e ? reject(e) : resolve())));
}

function unary(c: Client, path: string, req: Buffer, deadlineMs?: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const opts = deadlineMs !== undefined ? { deadline: Date.now() + deadlineMs } : {};
    c.makeUnaryRequest(path, identity, identity, req, new Metadata(), opts, (e: ServiceError | null, res?: Buffer) => (e ? reject(e) : resolve(res as Buffer)));
  });
}

// ---- etcdctl check perf ----

export interface Perf {
  throughput: number;
  slowest: number;
  stddev: number;
  pass: boolean;
  errors: number;
  /** "<error> × <count>", as etcdctl lists them. */
  errorKinds: string[];
  /** etcdctl's own "Error: …" when it exited without a verdict. */
  exitError?: string;
}

/** `flags`: etcdctl's global flags before the command (--user for bench:auth). */
export async function checkPerf(endpoints: readonly string[], load: 'm' | 'l', flags: readonly string[] = []): Promise<Perf> {
  // --auto-compact/--auto-defrag: the next run starts from a store as small as this one did. etcdctl's own
  // timeouts, as a user runs it.
  const r = await etcdctl(endpoints, ['check', 'perf', `--load=${load}`, '--auto-compact', '--auto-defrag'], { generousTimeouts: false, timeoutMs: 240_000, flags });
  const out = r.stdout + r.stderr;
  const num = (re: RegExp): number => Number(re.exec(out)?.[1] ?? NaN);
  const perf = {
    throughput: num(/(?:Throughput is|Throughput too low:) ([\d.]+) writes\/s/),
    slowest: num(/Slowest request took(?: too long:)? ([\d.]+)s/),
    stddev: num(/(?:Stddev is|Stddev too high:) ([\d.]+)s/),
    pass: /^PASS$/m.test(out),
    // etcdctl's "FAIL: ERROR(<error>) -> <count>" lines.
    errors: [...out.matchAll(/^FAIL: ERROR\(.*\) -> (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0),
    errorKinds: [...out.matchAll(/^FAIL: ERROR\((.*)\) -> (\d+)$/gm)].map((m) => `${m[1] ?? ''} × ${m[2] ?? ''}`),
    // etcdctl exits before its verdict when the clean-up Delete of everything it wrote fails (on a busy
    // machine a Delete of ~500k keys can exceed the server's request timeout).
    ...(/^Error: (.*)$/m.test(out) ? { exitError: /^Error: (.*)$/m.exec(out)?.[1] ?? '' } : {}),
  };
  if (Number.isNaN(perf.throughput)) process.stderr.write(`check perf --load=${load} printed:\n${out.slice(-2000)}\n`);
  return perf;
}

// ---- reads/s ----

async function readRate(endpoints: readonly string[], serializable: boolean): Promise<{ perSecond: number; errors: number }> {
  const clients = endpoints.flatMap((ep) => Array.from({ length: READ_CONNS_PER_MEMBER }, () => rawClient(ep)));
  await Promise.all(clients.map(ready));
  const req = encodeRange('bench/read', serializable);
  const start = Date.now() + READ_WARMUP_MS;
  const end = start + READ_MS;
  let done = 0;
  let errors = 0;
  const loop = async (c: Client): Promise<void> => {
    while (Date.now() < end) {
      try {
        await unary(c, '/etcdserverpb.KV/Range', req, 5000);
        const now = Date.now();
        if (now >= start && now < end) done++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(clients.flatMap((c) => Array.from({ length: READ_INFLIGHT_PER_CONN }, () => loop(c))));
  for (const c of clients) c.close();
  return { perSecond: (done / READ_MS) * 1000, errors };
}

/**
 * One client, one call at a time: the latency of a lone request (p50 over `ms`), after READ_WARMUP_MS of
 * the same calls untimed. A fresh Setpoint member runs its first few hundred calls before V8 has compiled
 * the hot path, at up to twice the steady latency; a server that runs for days is measured warm.
 */
async function loneLatency(endpoint: string, path: string, req: () => Buffer, ms: number): Promise<number> {
  const c = rawClient(endpoint);
  await ready(c);
  const warm = performance.now() + READ_WARMUP_MS;
  while (performance.now() < warm) await unary(c, path, req(), 5000);
  const times: number[] = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const t = performance.now();
    await unary(c, path, req(), 5000);
    times.push(performance.now() - t);
  }
  c.close();
  return median(times);
}

// ---- watch latency ----

/** Microseconds since the epoch, as the timestamp a put carries and a watcher compares. */
const nowUs = (): number => Math.round((performance.timeOrigin + performance.now()) * 1000);
const MARK = Buffer.from('lat:');

/**
 * One Watch stream on its own HTTP/2 connection, read without grpc-js: with 1000 watchers the client must
 * take 200,000 responses a second, and grpc-js's per-message path (a decoder, a Readable, an event per
 * message) made the bench client the bottleneck, so the latency it measured was mostly its own queue.
 * This splits each DATA chunk into gRPC messages and hands each one on.
 */
function rawWatchStream(url: string, onMessage: (msg: Buffer) => void): { write(req: Buffer): void; close(): void } {
  const session = http2.connect(url);
  session.on('error', () => undefined);
  const stream = session.request({ ':method': 'POST', ':path': '/etcdserverpb.Watch/Watch', 'content-type': 'application/grpc', te: 'trailers' });
  stream.on('error', () => undefined);
  const reader = new MessageReader();
  stream.on('data', (chunk: Buffer) => {
    for (const m of reader.push(chunk).messages) onMessage(m);
  });
  return {
    write(req) {
      stream.write(frameMessages([req]));
    },
    close() {
      stream.close();
      session.close();
    },
  };
}

async function watchLatency(endpoints: readonly string[]): Promise<WatchResult> {
  const writes = Math.round((WATCH_WRITES_PER_S * WATCH_MS) / 1000);
  const expected = writes * WATCHERS;
  const lat = new Float64Array(expected);
  let delivered = 0;
  let created = 0;
  const calls = Array.from({ length: WATCH_STREAMS }, (_, i) => {
    const call = rawWatchStream(endpoints[i % endpoints.length] as string, (msg) => {
      const t = nowUs();
      if (created < WATCHERS && topVarints(msg).get(3) === 1) created++;
      // A response may carry several events for its watcher: one timestamp each.
      for (let at = msg.indexOf(MARK); at >= 0; at = msg.indexOf(MARK, at + 4)) {
        const sent = Number(msg.toString('latin1', at + 4, at + 20));
        if (delivered < expected) lat[delivered] = (t - sent) / 1000;
        delivered++;
      }
    });
    const mine = Math.floor(WATCHERS / WATCH_STREAMS) + (i < WATCHERS % WATCH_STREAMS ? 1 : 0);
    for (let w = 0; w < mine; w++) call.write(encodeWatchCreate('bench/w/', 'bench/w0'));
    return call;
  });
  await waitFor(`${WATCHERS} watchers created`, () => created >= WATCHERS, { timeoutMs: 60_000, detail: () => `${created} so far` });
  const writer = rawClient(endpoints[0] as string);
  await ready(writer);
  const t0 = performance.now();
  const pending: Promise<unknown>[] = [];
  const warmup = Math.round((WATCH_WRITES_PER_S * WATCH_WARMUP_MS) / 1000);
  for (let i = 0; i < warmup + writes; i++) {
    // A steady rate: each put at its own slot in time, not after the previous one's answer.
    const wait = t0 + (i * 1000) / WATCH_WRITES_PER_S - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    // Warm-up events carry no "lat:" mark, so watchers do not time them.
    const value = i < warmup ? 'warm-up' : `lat:${String(nowUs()).padStart(16, '0')}`;
    pending.push(unary(writer, '/etcdserverpb.KV/Put', encodePut(`bench/w/${i % 100}`, value), 10_000).catch(() => undefined));
  }
  await Promise.all(pending);
  await waitFor('every event delivered', () => delivered >= expected, { timeoutMs: 30_000 }).catch(() => undefined);
  for (const call of calls) call.close();
  writer.close();
  // Events never delivered count as infinitely late, so a backlog cannot flatter the percentiles.
  const got = lat.subarray(0, Math.min(delivered, expected)).sort();
  const pct = (p: number): number => got[Math.floor(p * expected)] ?? Number.POSITIVE_INFINITY;
  return { p50: pct(0.5), p99: pct(0.99), delivered, expected };
}

// ---- failover write gap ----

/** SIGKILLs the leader while a writer puts every 10 ms through the other members; the gap is kill → first ack of a put sent after it. */
async function failoverGap(cluster: StoreCluster): Promise<number> {
  const leader = await cluster.waitForLeader();
  const others = cluster.running().filter((n) => n !== leader).map((n) => rawClient(cluster.clientUrl(n)));
  await Promise.all(others.map(ready));
  let killedAt = Number.POSITIVE_INFINITY;
  let firstAck = Number.POSITIVE_INFINITY;
  let acks = 0;
  let i = 0;
  const timer = setInterval(() => {
    const sent = performance.now();
    const c = others[i++ % others.length] as Client;
    unary(c, '/etcdserverpb.KV/Put', encodePut('bench/failover', String(i)), 3000).then(
      () => {
        acks++;
        if (sent >= killedAt) firstAck = Math.min(firstAck, performance.now());
      },
      () => undefined,
    );
  }, FAILOVER_WRITE_EVERY_MS);
  try {
    await waitFor('writes flowing before the kill', () => acks >= 20);
    killedAt = performance.now();
    if (KEEP) process.stderr.write(`failover: SIGKILL of ${leader} at ${new Date().toISOString()}\n`);
    await cluster.kill(leader, 'SIGKILL');
    await waitFor('a write acknowledged after the kill', () => firstAck < Number.POSITIVE_INFINITY, { timeoutMs: 60_000 });
  } finally {
    clearInterval(timer);
    for (const c of others) c.close();
  }
  await cluster.restart(leader, { wait: 'ready' });
  return firstAck - killedAt;
}

// ---- the run ----

interface SideResult {
  perfM?: Perf;
  /** The round with the median throughput. */
  perfL?: Perf;
  perfLRounds: number[];
  /** p50 of one request at a time through a follower (ms). */
  loneRead: number;
  lonePut: number;
  linReads: number;
  serReads: number;
  readErrors: number;
  /** Medians over the rounds, events summed. */
  watch: WatchResult;
  watchRounds: WatchResult[];
  failoverMs: number[];
}

interface WatchResult {
  p50: number;
  p99: number;
  delivered: number;
  expected: number;
}

export const log = (flavor: Flavor, m: string): void => void process.stderr.write(`[${flavor}] ${m}\n`);

/** A fresh cluster for one phase, so what one phase leaves behind (a failed check perf clean-up) cannot skew the next. */
export async function withCluster<T>(flavor: Flavor, f: (c: StoreCluster) => Promise<T>): Promise<T> {
  const cluster = await StoreCluster.start({ program: flavor, baseDir: tmpdir(), token: 'differential', label: `setpoint-bench-${flavor}-` });
  try {
    return await f(cluster);
  } finally {
    await cluster.destroy({ keep: KEEP });
    if (KEEP) log(flavor, `kept the cluster's data and member logs in ${cluster.dir}`);
  }
}

type Rest = Omit<SideResult, 'perfM' | 'perfL' | 'perfLRounds' | 'watch' | 'watchRounds'>;

async function measureRest(flavor: Flavor, cluster: StoreCluster): Promise<Rest> {
  const eps = cluster.endpoints();
  const leader0 = await cluster.waitForLeader();
  const seed = rawClient(eps[0] as string);
  await ready(seed);
  await unary(seed, '/etcdserverpb.KV/Put', encodePut('bench/read', Buffer.alloc(256, 0x61)));
  seed.close();
  const skipped = { perSecond: NaN, errors: 0 };
  log(flavor, 'lone requests');
  const lone = QUICK ? 1000 : 3000;
  // Through a follower, as most clients of a 3-member cluster are.
  const followerName = cluster.running().find((n) => n !== leader0);
  const follower = followerName !== undefined ? cluster.clientUrl(followerName) : (eps[0] as string);
  const loneRead = ONLY.has('reads') ? await loneLatency(follower, '/etcdserverpb.KV/Range', () => encodeRange('bench/read', false), lone) : NaN;
  let k = 0;
  const lonePut = ONLY.has('reads') ? await loneLatency(follower, '/etcdserverpb.KV/Put', () => encodePut(`bench/lone/${k++ % 100}`, Buffer.alloc(256, 0x62)), lone) : NaN;
  log(flavor, 'linearizable reads');
  const lin = ONLY.has('reads') ? await readRate(eps, false) : skipped;
  log(flavor, 'serializable reads');
  const ser = ONLY.has('reads') ? await readRate(eps, true) : skipped;
  const failoverMs: number[] = [];
  for (let t = 0; t < (ONLY.has('failover') ? FAILOVER_TRIALS : 0); t++) {
    log(flavor, `failover ${t + 1}/${FAILOVER_TRIALS}`);
    failoverMs.push(await failoverGap(cluster));
  }
  return { loneRead, lonePut, linReads: lin.perSecond, serReads: ser.perSecond, readErrors: lin.errors + ser.errors, failoverMs };
}

/**
 * Phase by phase, etcd then Setpoint, each phase on fresh clusters: the two sides of one row are
 * measured minutes apart at most, whatever else the machine is doing.
 */
async function measureBoth(): Promise<{ etcd: SideResult; ours: SideResult }> {
  const flavors = (['etcd', 'setpoint'] as const).filter((f) => SIDES.includes(f));
  const perf: Record<Flavor, { perfM?: Perf; perfL: Perf[] }> = { etcd: { perfL: [] }, setpoint: { perfL: [] } };
  if (!QUICK && ONLY.has('perf')) {
    for (const load of (process.env.BENCH_PERF_LOADS ?? 'm,l').split(',') as ('m' | 'l')[]) {
      const rounds = load === 'l' ? ROUNDS : 1;
      for (let r = 1; r <= rounds; r++) {
        for (const f of flavors) {
          log(f, `check perf --load=${load} (60 s)${rounds > 1 ? `, round ${r}/${rounds}` : ''}`);
          const p = await withCluster(f, (c) => checkPerf(c.endpoints(), load));
          if (load === 'm') perf[f].perfM = p;
          else perf[f].perfL.push(p);
        }
      }
    }
  }
  const none: Rest = { loneRead: NaN, lonePut: NaN, linReads: NaN, serReads: NaN, readErrors: 0, failoverMs: [] };
  const rest: Record<Flavor, Rest> = { etcd: none, setpoint: none };
  for (const f of flavors) rest[f] = await withCluster(f, (c) => measureRest(f, c));
  const watch: Record<Flavor, WatchResult[]> = { etcd: [], setpoint: [] };
  for (let r = 1; r <= (ONLY.has('watch') ? ROUNDS : 0); r++) {
    for (const f of flavors) {
      log(f, `watch latency (${WATCHERS} watchers, ${WATCH_WRITES_PER_S} writes/s), round ${r}/${ROUNDS}`);
      watch[f].push(await withCluster(f, (c) => watchLatency(c.endpoints())));
    }
  }
  const side = (f: Flavor): SideResult => {
    const l = perf[f].perfL;
    const medianL = [...l].sort((a, b) => a.throughput - b.throughput)[Math.floor(l.length / 2)];
    const w = watch[f];
    return {
      ...(perf[f].perfM ? { perfM: perf[f].perfM } : {}),
      ...(medianL ? { perfL: medianL } : {}),
      perfLRounds: l.map((p) => p.throughput),
      ...rest[f],
      watch: {
        p50: median(w.map((x) => x.p50)),
        p99: median(w.map((x) => x.p99)),
        delivered: w.reduce((n, x) => n + x.delivered, 0),
        expected: w.reduce((n, x) => n + x.expected, 0),
      },
      watchRounds: w,
    };
  };
  return { etcd: side('etcd'), ours: side('setpoint') };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

function fmt(n: number | undefined, digits = 0): string {
  if (n === undefined || Number.isNaN(n)) return '—';
  if (n === Number.POSITIVE_INFINITY) return 'not delivered';
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function ratio(ours: number | undefined, theirs: number | undefined): string {
  const bad = (x: number | undefined): boolean => x === undefined || !Number.isFinite(x);
  if (bad(ours) || bad(theirs) || theirs === 0) return '—';
  if (ours === undefined || theirs === undefined) return '—';
  return `${(ours / theirs).toFixed(2)}×`;
}

async function main(): Promise<void> {
  const etcdVersion = execFileSync('etcd', ['--version'], { encoding: 'utf8' }).split('\n')[0] ?? 'etcd';
  const cpu = cpus();
  console.log(`bench:etcd ${QUICK ? '(--quick) ' : ''}— ${new Date().toISOString()}`);
  console.log(`machine: ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${cpu.length} cores; node ${process.version}; ${etcdVersion}`);
  console.log('3-member clusters on loopback, same flags (heartbeat 100 ms, election 1000 ms), data in a temp dir on one disk; phase by phase, etcd then Setpoint, each phase (and each round) on fresh clusters.');
  // Everything here (servers and load generators) shares the machine: a busy one skews both sides.
  const load = (): string => loadavg().map((x) => x.toFixed(2)).join(' ');
  console.log(`load average at start: ${load()}`);
  const { etcd, ours } = await measureBoth();
  const rows: string[][] = [['', 'etcd 3.4', 'Setpoint', 'Setpoint/etcd']];
  const notes: string[] = [];
  for (const [name, load] of [
    ['check perf m', 'perfM'],
    ['check perf l', 'perfL'],
  ] as const) {
    const notRun: Perf = { throughput: NaN, slowest: NaN, stddev: NaN, pass: false, errors: NaN, errorKinds: [], exitError: 'not run' };
    const e = etcd[load] ?? (ours[load] ? notRun : undefined);
    const s = ours[load] ?? (etcd[load] ? notRun : undefined);
    if (!e || !s) {
      rows.push([`${name}`, 'skipped', 'skipped', '—']);
      continue;
    }
    const rounds = load === 'perfL' && etcd.perfLRounds.length + ours.perfLRounds.length > 2;
    rows.push([`${name}: throughput (writes/s)${rounds ? '²' : ''}`, fmt(e.throughput), fmt(s.throughput), ratio(s.throughput, e.throughput)]);
    if (rounds) rows.push([`${name}: throughput, each round`, etcd.perfLRounds.map((x) => fmt(x)).join(', '), ours.perfLRounds.map((x) => fmt(x)).join(', '), '—']);
    rows.push([`${name}: slowest request (s)`, fmt(e.slowest, 3), fmt(s.slowest, 3), ratio(s.slowest, e.slowest)]);
    rows.push([`${name}: stddev (s)`, fmt(e.stddev, 4), fmt(s.stddev, 4), ratio(s.stddev, e.stddev)]);
    rows.push([`${name}: failed requests`, fmt(e.errors), fmt(s.errors), '—']);
    const verdict = (p: Perf): string => (p.pass ? 'PASS' : p.exitError !== undefined ? 'no verdict¹' : 'FAIL');
    rows.push([`${name}: result`, verdict(e), verdict(s), '—']);
    for (const [side, p] of [['etcd', e], ['Setpoint', s]] as const) {
      if (p.exitError !== undefined) notes.push(`¹ ${name} on ${side}: etcdctl exited with "Error: ${p.exitError}" before printing its verdict.`);
      if (p.errorKinds.length > 0) notes.push(`${name} on ${side}, failed requests: ${p.errorKinds.join('; ')}`);
    }
  }
  rows.push(['linearizable read latency p50 (ms; 1 client via a follower)', fmt(etcd.loneRead, 2), fmt(ours.loneRead, 2), ratio(ours.loneRead, etcd.loneRead)]);
  rows.push(['put latency p50 (ms; 1 client via a follower)', fmt(etcd.lonePut, 2), fmt(ours.lonePut, 2), ratio(ours.lonePut, etcd.lonePut)]);
  const conns = `${READ_CONNS_PER_MEMBER * 3} conns × ${READ_INFLIGHT_PER_CONN} in flight`;
  rows.push([`linearizable reads/s (${conns})`, fmt(etcd.linReads), fmt(ours.linReads), ratio(ours.linReads, etcd.linReads)]);
  rows.push([`serializable reads/s (${conns})`, fmt(etcd.serReads), fmt(ours.serReads), ratio(ours.serReads, etcd.serReads)]);
  const w = `${WATCHERS} watchers, ${WATCH_WRITES_PER_S} writes/s`;
  const wr = ROUNDS > 1 ? '²' : '';
  rows.push([`watch latency p50 (ms; ${w})${wr}`, fmt(etcd.watch.p50, 1), fmt(ours.watch.p50, 1), ratio(ours.watch.p50, etcd.watch.p50)]);
  rows.push([`watch latency p99 (ms; ${w})${wr}`, fmt(etcd.watch.p99, 1), fmt(ours.watch.p99, 1), ratio(ours.watch.p99, etcd.watch.p99)]);
  rows.push([
    'watch latency p50 / p99, each round (ms)',
    etcd.watchRounds.map((x) => `${fmt(x.p50, 1)}/${fmt(x.p99, 1)}`).join(', '),
    ours.watchRounds.map((x) => `${fmt(x.p50, 1)}/${fmt(x.p99, 1)}`).join(', '),
    '—',
  ]);
  rows.push(['watch events delivered / expected', `${fmt(etcd.watch.delivered)} / ${fmt(etcd.watch.expected)}`, `${fmt(ours.watch.delivered)} / ${fmt(ours.watch.expected)}`, '—']);
  rows.push([
    `failover write gap (ms; median of ${FAILOVER_TRIALS})`,
    fmt(median(etcd.failoverMs)),
    fmt(median(ours.failoverMs)),
    ratio(median(ours.failoverMs), median(etcd.failoverMs)),
  ]);
  rows.push(['failover write gap, each trial (ms)', etcd.failoverMs.map((x) => fmt(x)).join(', '), ours.failoverMs.map((x) => fmt(x)).join(', '), '—']);
  console.log(markdownTable(rows));
  for (const n of notes) console.log(n);
  console.log(`load average at end: ${load()}`);
  if (etcd.readErrors + ours.readErrors > 0) console.log(`read errors: etcd ${etcd.readErrors}, Setpoint ${ours.readErrors}`);
  if (ROUNDS > 1) console.log(`² check perf l and watch latency: ${ROUNDS} rounds, etcd and Setpoint taking turns on fresh clusters; the row shows the median round (for check perf l, the round with the median throughput, with its own slowest, stddev and result).`);
  console.log(`lone requests: one call at a time on one connection to a follower, timed for ${QUICK ? 1 : 3} s after ${READ_WARMUP_MS / 1000} s of the same calls untimed.`);
  console.log(`watch latency: from a timestamp taken just before the put is sent to the event arriving at the watcher, after ${WATCH_WARMUP_MS / 1000} s of untimed writes at the same rate.`);
  console.log('failover: SIGKILL of the leader → first acknowledged put sent after the kill, with a put every 10 ms through the other members.');
}

// Run, not imported (bench/auth-bench.ts imports the cluster start and check perf).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
