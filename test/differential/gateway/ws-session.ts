// A websocket client session against etcd's JSON gateway, run from dist/ with `node --experimental-websocket`
// (Node's own client, not Setpoint's code): prints, as JSON, every open, frame and close each step saw.
// Usage: ws-session.js http://host:port

/** What this script uses of the WHATWG WebSocket that Node 20 has behind --experimental-websocket. */
interface ClientSocket {
  readonly protocol: string;
  onopen: (() => void) | null;
  onmessage: ((e: { data: unknown }) => void) | null;
  onerror: (() => void) | null;
  onclose: ((e: { code: number }) => void) | null;
  send(data: string | Buffer): void;
  close(): void;
}
const ClientWebSocket = (globalThis as unknown as { WebSocket: new (url: string, protocols?: string[]) => ClientSocket }).WebSocket;

interface Step {
  readonly protocols?: string[];
  readonly messages?: (string | Buffer)[];
  readonly after?: (frames: number) => Promise<void>;
  readonly until?: number;
}

const base = process.argv[2] ?? '';
const wsBase = base.replace(/^http/, 'ws');
const b64 = (s: string): string => Buffer.from(s).toString('base64');

const put = (key: string, value: string): Promise<Response> => fetch(`${base}/v3/kv/put`, { method: 'POST', body: JSON.stringify({ key: b64(key), value: b64(value) }) });

/**
 * Opens `path`, sends `messages`, and records what comes back. `after(frames, n)`: run once the n-th frame
 * came (to make events). Ends at `until` frames or when the server closes, or 5 s later.
 */
function step(path: string, { protocols, messages = [], after, until = Infinity }: Step = {}): Promise<unknown[]> {
  return new Promise((resolve) => {
    const seen: unknown[] = [];
    let frames = 0;
    const ws = new ClientWebSocket(wsBase + path, protocols);
    const done = (): void => {
      clearTimeout(timer);
      ws.onerror = null;
      ws.onclose = null;
      ws.close();
      resolve(seen);
    };
    const timer = setTimeout(() => {
      seen.push('(still open)');
      done();
    }, 5000);
    ws.onopen = () => {
      seen.push(`open ${ws.protocol}`);
      for (const m of messages) ws.send(m);
    };
    ws.onmessage = (e) => {
      frames++;
      seen.push(typeof e.data === 'string' ? (e.data.startsWith('{') ? (JSON.parse(e.data) as unknown) : e.data) : '<binary>');
      void (after ? after(frames) : Promise.resolve()).then(() => {
        if (frames >= until) done();
      });
    };
    ws.onerror = () => {
      seen.push('error');
      // A refused handshake: no close follows.
      if (seen.length === 1) done();
    };
    ws.onclose = (e) => {
      seen.push(`close ${e.code}`);
      clearTimeout(timer);
      resolve(seen);
    };
  });
}

const out: Record<string, unknown[]> = {};
out.watch = await step('/v3/watch', {
  messages: [JSON.stringify({ create_request: { key: b64('ws/'), range_end: b64('ws0') } })],
  until: 3,
  after: async (n) => {
    if (n === 1) await put('ws/a', '1');
    else if (n === 2) await put('ws/b', '2');
  },
});
// A request that does not decode closes the sending side; the watch made before it still sees events.
out.watchAfterGarbage = await step('/v3/watch', {
  messages: [JSON.stringify({ create_request: { key: b64('ws/c') } }), 'garbage', JSON.stringify({ create_request: { key: b64('ws/d') } })],
  until: 2,
  after: async (n) => {
    if (n === 1) {
      await put('ws/d', 'not watched');
      await put('ws/c', 'watched');
    }
  },
});
out.range = await step('/v3/kv/range', { messages: [JSON.stringify({ key: b64('ws/a') }), JSON.stringify({ key: b64('ws/b') })] });
out.rangeBinary = await step('/v3beta/kv/range', { messages: [Buffer.from(JSON.stringify({ key: b64('ws/b') }))] });
out.badJson = await step('/v3/kv/range', { messages: ['{"key":1}'] });
out.unknown = await step('/v3/kv/nope', { messages: ['{}'] });
out.bearer = await step('/v3/kv/range', { protocols: ['Bearer', 'not-a-token'], messages: [JSON.stringify({ key: b64('ws/a') })] });
out.notGateway = await step('/health');
out.v3alpha = await step('/v3alpha/watch');
// Sockets the client keeps for reuse would hold the process open.
process.stdout.write(JSON.stringify(out) + '\n', () => process.exit(0));
