// The harness's network: link proxies on real loopback sockets (blackhole holds the connection and
// swallows bytes, heal resets the damaged stream, delay with jitter never reorders, the dialer is read
// from etcd's rafthttp headers), partition shapes, and the seeded fault schedule's determinism.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { partitionCuts } from '../../jepsen-lite/src/nemesis.js';
import { Network } from '../../jepsen-lite/src/network.js';
import { LinkProxy } from '../../jepsen-lite/src/proxy.js';
import { freePort } from '../../src/harness/free-port.js';
import { waitFor } from '../../src/harness/wait.js';
import { makeSchedule, phasesFor } from '../../jepsen-lite/src/schedule.js';
import { SeededRng } from '../../src/raft/rng.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Waits for what the proxy must have done by now (the harness's waitFor, named by the condition). */
async function until(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  await waitFor(cond.toString(), cond, { timeoutMs, intervalMs: 5 });
}

/** An echo server that records what it received. */
async function echoServer(): Promise<{ port: number; received: () => Buffer }> {
  const chunks: Buffer[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('data', (d: Buffer) => {
      chunks.push(d);
      s.write(d);
    });
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  cleanups.push(() => new Promise<void>((r) => {
    for (const s of sockets) s.destroy();
    server.close(() => r());
  }));
  return { port: (server.address() as net.AddressInfo).port, received: () => Buffer.concat(chunks) };
}

async function connect(port: number): Promise<{ sock: net.Socket; got: () => Buffer; closed: () => boolean }> {
  const chunks: Buffer[] = [];
  let closed = false;
  const sock = net.connect(port, '127.0.0.1');
  sock.on('data', (d: Buffer) => chunks.push(d));
  sock.on('close', () => (closed = true));
  sock.on('error', () => {});
  await new Promise<void>((r) => sock.once('connect', () => r()));
  cleanups.push(() => void sock.destroy());
  return { sock, got: () => Buffer.concat(chunks), closed: () => closed };
}

async function proxy(network: Network, target: number, identity: ConstructorParameters<typeof LinkProxy>[2]): Promise<LinkProxy> {
  const p = new LinkProxy(await freePort(), target, identity, network, new SeededRng(1));
  await p.start();
  cleanups.push(() => p.stop());
  return p;
}

describe('link proxy', () => {
  it('blackholes a cut link without closing the connection, and resets the damaged stream on heal', async () => {
    const echo = await echoServer();
    const network = new Network();
    const p = await proxy(network, echo.port, { kind: 'fixed', from: 0, to: 1 });
    const c = await connect(p.listenPort);
    c.sock.write('hello');
    await until(() => c.got().toString() === 'hello');

    network.setCuts([[0, 1], [1, 0]]);
    c.sock.write('lost bytes');
    await until(() => p.bytesDropped >= 10);
    expect(echo.received().toString()).toBe('hello');
    expect(c.closed()).toBe(false);

    network.healAll();
    await until(() => c.closed());
    const c2 = await connect(p.listenPort);
    c2.sock.write('again');
    await until(() => c2.got().toString() === 'again');
  });

  it('cuts one direction only when told (asymmetric links)', async () => {
    const echo = await echoServer();
    const network = new Network();
    const p = await proxy(network, echo.port, { kind: 'fixed', from: 0, to: 1 });
    const c = await connect(p.listenPort);
    network.setCuts([[1, 0]]); // replies are lost, requests arrive
    c.sock.write('one-way');
    await until(() => echo.received().toString() === 'one-way');
    await until(() => p.bytesDropped >= 7);
    expect(c.got().length).toBe(0);
  });

  it('delays with jitter but never reorders bytes', async () => {
    const echo = await echoServer();
    const network = new Network();
    const p = await proxy(network, echo.port, { kind: 'fixed', from: 0, to: 1 });
    network.setQuality([[0, 1], [1, 0]], { delayMs: 15, jitterMs: 14, loss: 0.2 });
    const c = await connect(p.listenPort);
    const expected: string[] = [];
    for (let i = 0; i < 200; i++) {
      expected.push(`<${i}>`);
      c.sock.write(`<${i}>`);
      if (i % 20 === 0) await new Promise((r) => setImmediate(r));
    }
    await until(() => c.got().length === expected.join('').length, 20_000);
    expect(c.got().toString()).toBe(expected.join(''));
  });

  it("reads the dialing member from etcd's rafthttp headers and applies that link's rule", async () => {
    const echo = await echoServer();
    const network = new Network();
    const seen: (string | undefined)[] = [];
    const p = await proxy(network, echo.port, {
      kind: 'sniff',
      to: 1,
      resolve: (h) => {
        seen.push(h.get('x-server-from'));
        return h.get('x-peerurls') === 'http://127.0.0.1:9000' ? 2 : undefined;
      },
    });
    network.setCuts([[2, 1], [1, 2]]);
    const c = await connect(p.listenPort);
    c.sock.write('GET /raft/stream/msgapp/abc HTTP/1.1\r\nX-Server-From: abc\r\nX-PeerURLs: http://127.0.0.1:9000\r\n\r\n');
    await until(() => p.bytesDropped > 0);
    expect(seen).toEqual(['abc']);
    expect(echo.received().length).toBe(0);
    const other = await connect(p.listenPort); // not a member: passes
    other.sock.write('GET /version HTTP/1.1\r\n\r\n');
    await until(() => other.got().toString().startsWith('GET /version'));
  });
});

describe('partition shapes', () => {
  const heard = (cuts: [number, number][], n: number, x: number): Set<number> => {
    const s = new Set<number>([x]);
    for (let y = 0; y < n; y++) if (y !== x && !cuts.some(([f, t]) => f === y && t === x)) s.add(y);
    return s;
  };
  for (const n of [3, 5]) {
    const order = Array.from({ length: n }, (_, i) => i);
    it(`${n} nodes: one, majority, bridge`, () => {
      expect(partitionCuts('one', order, undefined)).toHaveLength(2 * (n - 1));
      expect(partitionCuts('leader', order, n - 1).every(([a, b]) => a === n - 1 || b === n - 1)).toBe(true);
      const maj = partitionCuts('majority', order, undefined);
      expect(heard(maj, n, 0).size).toBe(Math.floor(n / 2));
      expect(heard(maj, n, n - 1).size).toBe(n - Math.floor(n / 2));
      const bridge = partitionCuts('bridge', order, undefined);
      const b = Math.floor((n - 1) / 2);
      expect(heard(bridge, n, b).size).toBe(n); // the bridge sees everyone
      expect(heard(bridge, n, 0).has(n - 1)).toBe(false);
    });
    it(`${n} nodes: majorities-ring gives every node a different majority`, () => {
      const cuts = partitionCuts('majorities-ring', order, undefined);
      const views = order.map((x) => [...heard(cuts, n, x)].sort().join(','));
      for (const x of order) expect(heard(cuts, n, x).size).toBe(Math.floor(n / 2) + 1);
      expect(new Set(views).size).toBe(n);
    });
  }
});

describe('fault schedule', () => {
  it('is a function of the seed', () => {
    const mk = (seed: number): string => JSON.stringify(makeSchedule(['partition', 'kill', 'pause', 'member'], phasesFor(60_000), 4, new SeededRng(seed)));
    expect(mk(42)).toBe(mk(42));
    expect(mk(42)).not.toBe(mk(43));
    const s = makeSchedule(['kill'], phasesFor(60_000), 3, new SeededRng(1));
    expect(s.length).toBeGreaterThan(2);
    expect(s[0]!.at).toBeGreaterThanOrEqual(5000);
    expect(s[s.length - 1]!.until).toBeLessThanOrEqual(50_000);
  });

  it('deals every requested kind before repeating one', () => {
    const s = makeSchedule(['one', 'kill', 'pause', 'delay'], phasesFor(60_000), 3, new SeededRng(9));
    const first4 = s.slice(0, 4).map((f) => (f.spec.kind === 'partition' ? f.spec.shape : f.spec.kind));
    expect(first4.sort()).toEqual(['delay', 'kill', 'one', 'pause']);
  });
});
