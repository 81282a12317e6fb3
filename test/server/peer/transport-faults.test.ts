// The peer transport when peers fail: a receiver that closes and comes back on the same port, and a
// partition that keeps connections open but swallows every byte (a blackholing proxy in between).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { BlackholeProxy } from '../helpers/blackhole-proxy.js';
import { app, Harness, heartbeat, waitFor } from '../helpers/peer-harness.js';
import type { Node } from '../helpers/peer-harness.js';

const h = new Harness();
const stops: (() => void)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) stop();
  await h.closeAll();
});

/** Why the node's streams to its peers were lost, in order, from its "peer became inactive" log lines. */
function lostReasons(n: Node): unknown[] {
  return n.logs.lines.filter((l) => l.msg === 'peer became inactive').map((l) => l.reason);
}

/** The reason a stream ends when its peer stops acknowledging keepalive PINGs. */
const KEEPALIVE = 'keepalive ping not acknowledged';

/** Sends a heartbeat every few ms, as a leader's ticks would; `seq` is the commit of the last one sent. */
function ticker(from: Node, to: bigint): { readonly seq: number } {
  const state = { seq: 0 };
  const timer = setInterval(() => from.transport.send([heartbeat(from.id, to, ++state.seq)]), 10);
  stops.push(() => clearInterval(timer));
  return state;
}

describe('peer transport: reconnection', () => {
  it('reports the peer unreachable while it is down and delivers again once it is back on its port', async () => {
    // A long election timeout (so slow keepalives and probes): on a loaded machine a starved event loop must
    // not cut the restored link while the run below is in flight; this test is about the refused port.
    const [a, b] = await h.pair({ electionTimeoutMs: 5000 });
    a.transport.send([heartbeat(1n, 2n, 0)]);
    await waitFor(() => b.member.received.length === 1, 'first message');
    await waitFor(() => a.transport.activeSince(2n) !== undefined, 'stream 1->2 up');
    const firstUp = a.transport.activeSince(2n) as number;
    const port = new URL(b.url).port;

    await b.transport.close();
    const tick = ticker(a, 2n);
    await waitFor(() => a.member.unreachable.includes(2n), 'peer 2 reported unreachable');
    await waitFor(() => (a.transport.stats().outbound.get(2n)?.failures ?? 0) >= 2, 'a redial that failed too');
    expect(a.transport.isActive(2n)).toBe(false);
    expect(a.transport.activeSince(2n)).toBeUndefined();

    const b2 = await h.node(2n, { listenUrls: [`http://127.0.0.1:${port}`], electionTimeoutMs: 5000 });
    const downTo = tick.seq;
    await waitFor(() => b2.member.received.some((m) => m.commit > downTo), 'heartbeats at the restarted member');
    await waitFor(() => a.transport.isActive(2n), 'peer 2 active again');
    // The link that came back is up since it came back, not since the first one.
    expect(a.transport.activeSince(2n)).toBeGreaterThan(firstUp);
    // Once reconnected, an ordered run arrives whole and in order.
    stops.splice(0).forEach((s) => s());
    // A heartbeat the ticker queued just before it stopped may still land among them: count the run alone.
    const before = b2.member.received.length;
    const run = (): number[] => b2.member.received.slice(before).filter((m) => m.type === 'app').map((m) => m.index);
    for (let i = 0; i < 1000; i++) a.transport.send([app(1n, 2n, i)]);
    await waitFor(() => run().length >= 1000, 'the run after reconnecting');
    expect(run()).toEqual(Array.from({ length: 1000 }, (_, i) => i));
  });

  it('backs off between attempts to a peer that is not there', async () => {
    const a = await h.node(1n, { timings: { backoffMinMs: 50, backoffMaxMs: 400 } });
    const gone = await h.node(2n);
    await gone.transport.close();
    a.transport.addPeer(2n, [gone.url]);
    const t0 = performance.now();
    await waitFor(() => (a.transport.stats().outbound.get(2n)?.failures ?? 0) >= 8, 'eight failed attempts');
    // 25+50+100+200+4×200.. ms at least (jitter halves at most): without backoff this takes a few ms.
    expect(performance.now() - t0).toBeGreaterThan(500);
    // While down, messages are dropped at once rather than queued.
    a.transport.send([heartbeat(1n, 2n, 1), heartbeat(1n, 2n, 2)]);
    expect(a.transport.stats().outbound.get(2n)?.queued).toBe(0);
  });
});

describe('peer transport: a peer that comes back', () => {
  it('is dialled at once when it dials us, not after our backoff runs out', async () => {
    // A backoff of 30–60 s: the stream can only come back within the wait below if the peer's own stream
    // to us ends it.
    const a = await h.node(1n, { timings: { backoffMinMs: 60_000, backoffMaxMs: 60_000 } });
    const gone = await h.node(2n);
    await gone.transport.close();
    a.transport.addPeer(2n, [gone.url]);
    await waitFor(() => (a.transport.stats().outbound.get(2n)?.failures ?? 0) >= 1, 'a failed attempt');

    const b = await h.node(2n, { listenUrls: [`http://127.0.0.1:${new URL(gone.url).port}`] });
    b.transport.addPeer(1n, [a.url]);
    await waitFor(() => a.transport.activeSince(2n) !== undefined, 'stream 1->2 up again', 20_000);
    expect(a.transport.stats().outbound.get(2n)?.failures).toBe(1);
    a.transport.send([heartbeat(1n, 2n, 7)]);
    await waitFor(() => b.member.received.some((m) => m.commit === 7), 'a message after the peer came back');
  });
});

describe('peer transport: a stopped peer', () => {
  it('detects a SIGSTOPped peer (the kernel still acknowledges its TCP) and recovers after SIGCONT', async () => {
    const electionTimeoutMs = 500;
    const a = await h.node(1n, { electionTimeoutMs });
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../helpers/peer-child.ts', import.meta.url)), a.url, String(electionTimeoutMs)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    stops.push(() => {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    });
    let url: string | undefined;
    let lastCommit = 0;
    createInterface({ input: child.stdout }).on('line', (line) => {
      const o = JSON.parse(line) as { url?: string; commit?: number };
      if (o.url) url = o.url;
      if (o.commit !== undefined) lastCommit = o.commit;
    });
    await waitFor(() => url !== undefined, 'the child peer listening', 30_000);
    a.transport.addPeer(2n, [url as string]);
    const tick = ticker(a, 2n);
    await waitFor(() => lastCommit > 0 && a.transport.isActive(2n), 'the child receiving heartbeats');

    child.kill('SIGSTOP');
    const before = a.member.unreachable.length;
    const inactiveBefore = lostReasons(a).length;
    await waitFor(() => a.member.unreachable.length > before, 'the stopped peer reported unreachable', 15_000);
    // Found out by keepalive (a PING every E/2, given up 2E later), which is what bounds the time it takes:
    // TCP alone would go on for minutes, since the kernel keeps acknowledging.
    expect(lostReasons(a).slice(inactiveBefore)).toEqual([KEEPALIVE]);
    expect(a.transport.isActive(2n)).toBe(false);

    child.kill('SIGCONT');
    const resumedAt = tick.seq;
    await waitFor(() => lastCommit > resumedAt, 'heartbeats after SIGCONT', 20_000);
    await waitFor(() => a.transport.isActive(2n), 'the peer active again', 20_000);
  });
});

describe('peer transport: blackhole', () => {
  it('detects a peer behind a blackhole within a bounded time, keeps its queue bounded, and recovers', async () => {
    const electionTimeoutMs = 500;
    const opts = { electionTimeoutMs, limits: { maxQueueMessages: 256 } };
    const a = await h.node(1n, opts);
    const b = await h.node(2n, opts);
    const proxy = h.track(await BlackholeProxy.start(Number(new URL(b.url).port)));
    a.transport.addPeer(2n, [proxy.url]);
    b.transport.addPeer(1n, [a.url]);
    const tick = ticker(a, 2n);
    await waitFor(() => a.transport.isActive(2n) && b.member.received.length > 5, 'stream through the proxy');

    proxy.blackhole();
    const cutAt = tick.seq;
    const unreachableBefore = a.member.unreachable.length;
    const inactiveBefore = lostReasons(a).length;
    // Heartbeats alone never fill the queue: only keepalive can tell the stream is dead.
    await waitFor(() => a.member.unreachable.length > unreachableBefore, 'peer 2 reported unreachable', 15_000);
    // Keepalive pings every E/2 and gives up after 2E more: found out that way, detection takes about 2.5
    // election timeouts, where TCP alone would take minutes.
    expect(lostReasons(a).slice(inactiveBefore)).toEqual([KEEPALIVE]);
    await waitFor(() => !a.transport.isActive(2n), 'peer 2 inactive');
    expect(proxy.dropped).toBeGreaterThan(0);
    // Redialling opens a connection whose handshake the blackhole swallows; grpc-js would wait on it
    // forever, so the stream gives it up after the connect timeout and dials again.
    const failures = a.transport.stats().outbound.get(2n)?.failures ?? 0;
    await waitFor(() => (a.transport.stats().outbound.get(2n)?.failures ?? 0) > failures, 'a redial into the blackhole given up', 15_000);

    // A flood while the peer is unreachable: dropped and reported, never piled up.
    for (let i = 0; i < 20; i++) a.transport.send(Array.from({ length: 500 }, (_, j) => app(1n, 2n, i * 500 + j, 1024)));
    const stats = a.transport.stats().outbound.get(2n);
    expect(stats?.queued).toBeLessThanOrEqual(256);
    expect(stats?.dropped).toBeGreaterThan(9000);

    proxy.forward();
    const healedAt = tick.seq;
    await waitFor(() => b.member.received.some((m) => m.commit > healedAt), 'heartbeats after the partition heals', 20_000);
    await waitFor(() => a.transport.isActive(2n), 'peer 2 active again', 20_000);
    // What was lost in the blackhole stays lost (Raft resends); nothing arrives twice or out of order.
    const commits = b.member.received.filter((m) => m.type === 'heartbeat').map((m) => m.commit);
    expect(commits.every((c, i) => i === 0 || c > (commits[i - 1] ?? 0))).toBe(true);
    expect(commits.filter((c) => c > cutAt && c <= healedAt).length).toBeLessThan(healedAt - cutAt);
  });
});

describe('peer transport: peer URLs', () => {
  it('tries the next URL of a peer when one does not answer', async () => {
    const a = await h.node(1n);
    const b = await h.node(2n);
    const dead = await h.node(3n);
    const deadUrl = dead.url;
    await dead.transport.close();
    a.transport.addPeer(2n, [deadUrl, b.url]);
    ticker(a, 2n);
    await waitFor(() => b.member.received.length > 0, 'a message over the second URL');
  });

  it('moves to the new URLs of an updated peer', async () => {
    const [a, b] = await h.pair();
    const b2 = await h.node(2n);
    a.transport.send([heartbeat(1n, 2n, 1)]);
    await waitFor(() => b.member.received.length === 1, 'a message to the old address');
    a.transport.updatePeer(2n, [b2.url]);
    a.transport.send([heartbeat(1n, 2n, 2)]);
    await waitFor(() => b2.member.received.length === 1, 'a message to the new address');
    expect(b.member.received.map((m) => m.commit)).toEqual([1]);
    // Updating with the same URLs keeps the stream it has.
    const failures = a.transport.stats().outbound.get(2n)?.failures;
    await waitFor(() => a.transport.isActive(2n), 'stream to the new address up');
    a.transport.updatePeer(2n, [b2.url]);
    a.transport.send([heartbeat(1n, 2n, 3)]);
    await waitFor(() => b2.member.received.length === 2, 'a message after the no-op update');
    expect(a.transport.stats().outbound.get(2n)?.failures).toBe(failures);
  });
});
