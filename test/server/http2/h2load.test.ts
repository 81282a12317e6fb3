// A second, independent HTTP/2 client: nghttp2's h2load (Debian's nghttp2-client) loads a real member with
// unary gRPC calls, Range and Put at once, over several connections with many streams each. Every request
// must be answered with 200 and counted by the member as an OK call. The longest the member's loop was
// held is printed, not bounded: under a load that keeps the member's CPU busy, a young-generation
// collection done on the loop's thread alone (its helpers wait for a CPU too) took 20 to 70 ms here.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startCluster } from '../../e2e/helpers/cluster.js';
import { scrapeLoop } from '../../../src/harness/loop-metrics.js';
import { PUT, RANGE, grpcMessage, putRequest, rangeRequest } from './raw-h2.js';

const run = promisify(execFile);
const REQUESTS = 20_000;

interface H2loadResult {
  readonly succeeded: number;
  readonly failed: number;
  readonly ok2xx: number;
}

async function h2load(url: string, body: string, requests: number): Promise<H2loadResult> {
  const { stdout } = await run(
    'h2load',
    ['-n', String(requests), '-c', '4', '-m', '32', '-d', body, '-H', 'content-type: application/grpc', '-H', 'te: trailers', url],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  const m = /requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed/.exec(stdout);
  const codes = /status codes: (\d+) 2xx/.exec(stdout);
  if (!m || !codes) throw new Error(`unexpected h2load output:\n${stdout}`);
  return { succeeded: Number(m[1]), failed: Number(m[2]), ok2xx: Number(codes[1]) };
}

/** grpc_server_handled_total for one method and code, from the member's /metrics. */
async function handled(url: string, method: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = new RegExp(`^grpc_server_handled_total\\{[^}]*grpc_method="${method}"[^}]*grpc_code="OK"[^}]*\\} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

describe('h2load against a member', () => {
  it(`answers ${REQUESTS} Range and ${REQUESTS} Put calls from h2load, all OK`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'setpoint-h2load-'));
    try {
      const rangeBody = join(dir, 'range.bin');
      const putBody = join(dir, 'put.bin');
      writeFileSync(rangeBody, grpcMessage(rangeRequest('h2load')));
      writeFileSync(putBody, grpcMessage(putRequest('h2load', Buffer.from('value'))));
      const cluster = await startCluster({ size: 1, heartbeatMs: 100, electionMs: 1000 });
      const url = cluster.clientUrl('a');
      const [rangesBefore, putsBefore] = [await handled(url, 'Range'), await handled(url, 'Put')];
      await scrapeLoop(url);
      const [ranges, puts] = await Promise.all([h2load(`${url}${RANGE}`, rangeBody, REQUESTS), h2load(`${url}${PUT}`, putBody, REQUESTS)]);
      const loop = await scrapeLoop(url);
      console.log(`h2load: loop held at most ${(loop.held * 1000).toFixed(1)} ms (wall-clock delay ${(loop.wall * 1000).toFixed(1)} ms)`);
      expect(ranges).toEqual({ succeeded: REQUESTS, failed: 0, ok2xx: REQUESTS });
      expect(puts).toEqual({ succeeded: REQUESTS, failed: 0, ok2xx: REQUESTS });
      expect((await handled(url, 'Range')) - rangesBefore).toBe(REQUESTS);
      expect((await handled(url, 'Put')) - putsBefore).toBe(REQUESTS);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
