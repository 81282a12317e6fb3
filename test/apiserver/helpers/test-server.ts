// A real API server for tests: on a random port, with certificates from a temporary --cert-dir (so the
// PKI under test is the one in use), an admin and a plain user with client certificates, a bearer-token
// user, the fixtures' descriptors and a handler the test chooses. stop() also removes the directory.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { DEFAULT_MAX_REQUEST_BODY_BYTES, startApiServer, type ApiServerConfig, type ApiServerDeps, type RunningApiServer } from '../../../src/apiserver/api-server.js';
import { loadTokenFile } from '../../../src/apiserver/authn/token-file.js';
import type { ResourceHandler } from '../../../src/apiserver/handler.js';
import { prepareCertDir } from '../../../src/apiserver/pki/cert-dir.js';
import { issueClientCert, type KeyPair } from '../../../src/apiserver/pki/certificates.js';
import { ResourceRegistry, type ResourceDescriptor } from '../../../src/apiserver/resource-registry.js';
import { servingSans } from '../../../src/apiserver/pki/serving-sans.js';
import { ALL_DESCRIPTORS, echoHandler } from './fixtures.js';

export const TOKEN = 'bob-token-0123456789';

export interface TestServer {
  readonly server: RunningApiServer;
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  readonly ca: KeyPair;
  /** CN=admin, O=system:masters. */
  readonly admin: KeyPair;
  /** CN=alice, O=dev, O=ops. */
  readonly alice: KeyPair;
  readonly registry: ResourceRegistry;
  stop(): Promise<void>;
}

export interface TestServerOptions {
  readonly handler?: ResourceHandler;
  readonly descriptors?: readonly ResourceDescriptor[];
  readonly config?: Partial<ApiServerConfig>;
  readonly deps?: Partial<Omit<ApiServerDeps, 'registry' | 'log'>>;
}

export const testLog = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'setpoint-apiserver-'));
  const pki = await prepareCertDir(join(dir, 'pki'), servingSans({ bindAddress: '127.0.0.1' }));
  const admin = await issueClientCert(pki.ca, { user: 'admin', groups: ['system:masters'] });
  const alice = await issueClientCert(pki.ca, { user: 'alice', groups: ['dev', 'ops'] });
  const tokenFile = join(dir, 'tokens.csv');
  writeFileSync(tokenFile, `${TOKEN},bob,uid-bob,"viewers,dev"\n`);
  const registry = new ResourceRegistry();
  for (const d of opts.descriptors ?? ALL_DESCRIPTORS) registry.register(d, opts.handler ?? echoHandler);
  const serving = pki.serving;
  if (!serving) throw new Error('no serving certificate');
  let server: RunningApiServer;
  try {
    server = await startApiServer(
      {
        bindAddress: '127.0.0.1',
        securePort: 0,
        servingCertPem: serving.certPem,
        servingKeyPem: serving.keyPem,
        clientCaPem: pki.ca.certPem,
        tokens: loadTokenFile(tokenFile),
        anonymousAuth: true,
        maxRequestsInflight: 400,
        maxMutatingRequestsInflight: 200,
        requestTimeoutMs: 60_000,
        minRequestTimeoutSeconds: 1800,
        maxRequestBodyBytes: DEFAULT_MAX_REQUEST_BODY_BYTES,
        http2MaxStreamsPerConnection: 0,
        etcdHealthcheckTimeoutMs: 2000,
        ...opts.config,
      },
      { storeCheck: async () => {}, ...opts.deps, registry, log: testLog },
    );
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    server,
    port: server.port,
    url: server.url,
    dir,
    ca: pki.ca,
    admin,
    alice,
    registry,
    async stop() {
      await server.stop(2000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
