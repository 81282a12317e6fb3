// Starts the client port on a real port (0: the system picks) over a SingleNodeStore, and stops both.
import pino from 'pino';
import type { Logger } from 'pino';
import { startClientPort } from '../../../src/server/embed/client-port.js';
import type { ClientPort, ClientPortOptions } from '../../../src/server/embed/client-port.js';
import { createMetrics } from '../../../src/server/embed/metrics.js';
import type { EtcdMetrics } from '../../../src/server/embed/metrics.js';
import { waitFor as harnessWaitFor } from '../../../src/harness/wait.js';
import { SingleNodeStore } from './single-node-store.js';
import type { SingleNodeOptions } from './single-node-store.js';

export interface FixturePort {
  readonly store: SingleNodeStore;
  readonly port: ClientPort;
  readonly metrics: EtcdMetrics;
  /** The first listen address, e.g. http://127.0.0.1:40123. */
  readonly endpoint: string;
  close(): Promise<void>;
}

/** Quiet unless SETPOINT_TEST_LOG names a level (e.g. debug). */
export function testLogger(): Logger {
  return pino({ level: process.env['SETPOINT_TEST_LOG'] ?? 'silent' });
}

export async function startFixturePort(
  opts: Partial<Omit<ClientPortOptions, 'store' | 'logger' | 'metrics'>> & { store?: SingleNodeOptions } = {},
): Promise<FixturePort> {
  const store = await SingleNodeStore.open(opts.store ?? {});
  const metrics = createMetrics({ processMetrics: false });
  let port: ClientPort;
  try {
    port = await startClientPort({ listenUrls: ['http://127.0.0.1:0'], ...opts, store, logger: testLogger(), metrics });
  } catch (e) {
    await store.close();
    throw e;
  }
  const endpoint = port.addresses[0] as string;
  store.clientURLs = port.addresses;
  return {
    store,
    port,
    metrics,
    endpoint,
    close: async () => {
      await port.close();
      await store.close();
    },
  };
}

/** Polls `cond` until it holds; fails with `what` after `timeoutMs` (the harness's waitFor, condition first). */
export async function waitFor(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  await harnessWaitFor(what, cond, { timeoutMs, intervalMs: 10 });
}
