// The :authority fix, checked against nghttp2 on both ends: bytes that Node's HTTP/2 client really sends
// (HPACK-encoded, Huffman-coded where shorter) go through the fixer into Node's HTTP/2 server, which must
// accept the request that it would otherwise reset, with every other header intact.
import http2 from 'node:http2';
import net from 'node:net';
import { Duplex } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { AuthorityFixer } from '../../../src/server/http2/authority.js';
import { HUFFMAN_CODES, HUFFMAN_LENGTHS, huffmanDecode } from '../../../src/server/http2/hpack-huffman.js';
import { etcdctl } from '../../../src/harness/etcdctl.js';
import { startFixturePort } from '../helpers/client-port-harness.js';

/** What Node's HTTP/2 client writes for one request, up to and including its HEADERS frame. */
async function clientBytes(headers: http2.OutgoingHttpHeaders): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let session: http2.ClientHttp2Session | undefined;
  const server = net.createServer((sock) => {
    sock.on('data', (d: Buffer) => {
      chunks.push(d);
      const all = Buffer.concat(chunks);
      // Done once a HEADERS frame (type 1) has fully arrived after the 24-byte preface.
      for (let pos = 24; pos + 9 <= all.length; pos += 9 + all.readUIntBE(pos, 3)) {
        if (all[pos + 3] === 1 && pos + 9 + all.readUIntBE(pos, 3) <= all.length) sock.emit('done');
      }
    });
    sock.once('done', () => {
      sock.destroy();
      server.close();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => {
    server.once('close', resolve);
    session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => undefined);
    const req = session.request(headers);
    req.on('error', () => undefined);
  });
  session?.destroy();
  return Buffer.concat(chunks);
}

/**
 * Plays `bytes` into a Node HTTP/2 server session; resolves with the first request's headers, or with
 * the error code of the RST_STREAM the server writes back when nghttp2 refuses the request.
 */
function serve(bytes: Buffer): Promise<http2.IncomingHttpHeaders | { reset: number }> {
  return new Promise((resolve) => {
    const server = http2.createServer();
    let written = Buffer.alloc(0);
    const conn = new Duplex({
      read() {},
      write(chunk: Buffer, _encoding, callback) {
        written = Buffer.concat([written, chunk]);
        for (let pos = 0; pos + 9 <= written.length; pos += 9 + written.readUIntBE(pos, 3)) {
          if (written[pos + 3] === 3 && pos + 13 <= written.length) resolve({ reset: written.readUInt32BE(pos + 9) });
        }
        callback();
      },
    });
    server.on('stream', (stream, headers) => {
      resolve(headers);
      stream.close();
    });
    server.on('session', (session) => session.on('error', () => undefined));
    server.emit('connection', conn);
    conn.push(bytes);
  });
}

function huffmanEncode(s: Buffer): Buffer {
  let bits = '';
  for (const c of s) bits += (HUFFMAN_CODES[c] as number).toString(2).padStart(HUFFMAN_LENGTHS[c] as number, '0');
  bits = bits.padEnd(Math.ceil(bits.length / 8) * 8, '1');
  return Buffer.from(bits.match(/.{8}/g)?.map((b) => parseInt(b, 2)) ?? []);
}

describe('HPACK Huffman code', () => {
  it('round-trips every byte value', () => {
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    expect(huffmanDecode(huffmanEncode(all))).toEqual(all);
  });

  it('rejects padding that is not all ones or longer than 7 bits', () => {
    expect(huffmanDecode(Buffer.from([0x00]))).toBeUndefined();
    expect(huffmanDecode(Buffer.from([0xff, 0xff]))).toBeUndefined();
  });
});

describe(':authority fix', () => {
  const headers = { ':method': 'POST', ':path': '/etcdserverpb.Maintenance/Status', 'content-type': 'application/grpc', 'x-probe': 'probe value /?#' };

  it('makes a URL-shaped :authority acceptable to nghttp2, leaving the other headers alone', async () => {
    const raw = await clientBytes({ ...headers, ':authority': 'http://127.0.0.1:2379' });
    // Unfixed, nghttp2 resets the stream with PROTOCOL_ERROR (1): the request never arrives.
    expect(await serve(raw)).toEqual({ reset: 1 });
    const fixed = Buffer.concat(new AuthorityFixer().push(raw));
    const got = await serve(fixed);
    expect(got).toMatchObject({ ':authority': 'http:__127.0.0.1:2379', ':path': headers[':path'], 'x-probe': headers['x-probe'] });
  });

  it('passes valid authorities through byte for byte, however the bytes are split', async () => {
    const raw = await clientBytes({ ...headers, ':authority': '127.0.0.1:2379' });
    const fixer = new AuthorityFixer();
    const out: Buffer[] = [];
    for (let i = 0; i < raw.length; i += 7) out.push(...fixer.push(raw.subarray(i, i + 7)));
    expect(Buffer.concat(out)).toEqual(raw);
  });

  it('fixes a request split across chunks at every offset', async () => {
    const raw = await clientBytes({ ...headers, ':authority': 'unix:///tmp/etcd.sock' });
    const whole = Buffer.concat(new AuthorityFixer().push(raw));
    for (let cut = 1; cut < raw.length; cut++) {
      const fixer = new AuthorityFixer();
      expect(Buffer.concat([...fixer.push(raw.subarray(0, cut)), ...fixer.push(raw.subarray(cut))])).toEqual(whole);
    }
  });

  it('lets clientv3 single-endpoint calls through: etcdctl endpoint status and hashkv', async () => {
    const fx = await startFixturePort();
    try {
      const st = await etcdctl(fx.endpoint, ['endpoint', 'status']);
      expect(st.stdout).toContain(`${fx.endpoint}, 8e9e05c52164694d, 3.4.23`);
      const hk = await etcdctl(fx.endpoint, ['endpoint', 'hashkv']);
      expect(hk.stdout).toMatch(new RegExp(`^${fx.endpoint}, \\d+\\n$`));
    } finally {
      await fx.close();
    }
  });
});
