// kubectl itself against the shell (the kubectl on this machine, with a kubeconfig holding the cluster CA
// and a client certificate from it): version, api-resources through aggregated discovery, raw health,
// and its error lines for what the shell refuses — as kubectl prints them against kube-apiserver.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderKubeconfig } from '../../src/apiserver/pki/kubeconfig.js';
import { StatusError, statuses } from '../../src/apiserver/status.js';
import { echoHandler, handlerOf } from './helpers/fixtures.js';
import { runKubectl, type KubectlResult } from './helpers/kubectl-runner.js';
import { startTestServer, TOKEN, type TestServer } from './helpers/test-server.js';


describe('kubectl', () => {
  let ts: TestServer;
  let n = 0;
  const configs: Record<string, string> = {};
  beforeAll(async () => {
    ts = await startTestServer({
      handler: handlerOf(async (req, res) => {
        if (req.info.name === 'nope') throw new StatusError(statuses.notFound({ group: req.resource.group, resource: req.resource.resource }, 'nope'));
        await echoHandler.serve(req, res);
      }),
    });
    const base = { server: ts.url, caPem: ts.ca.certPem };
    const write = (name: string, text: string): void => {
      configs[name] = join(ts.dir, `${name}.kubeconfig`);
      writeFileSync(configs[name], text, { mode: 0o600 });
    };
    write('admin', renderKubeconfig({ ...base, userName: 'admin', clientCertPem: ts.admin.certPem, clientKeyPem: ts.admin.keyPem }));
    write('token', renderKubeconfig({ ...base, userName: 'bob', token: TOKEN }));
    write('badtoken', renderKubeconfig({ ...base, userName: 'bob', token: 'wrong' }));
    // No token and no certificate: kubectl would prompt for basic-auth credentials, so give it some;
    // the server reads Basic as no credential at all, as kube-apiserver (without basic auth) does.
    write('nobody', renderKubeconfig({ ...base, userName: 'nobody' }).replace('user: {}', 'user:\n      username: nobody\n      password: secret'));
  });
  afterAll(async () => {
    await ts?.stop();
  });

  /** kubectl with its own HOME and discovery cache, so no run sees another's. Never throws. */
  async function kubectl(config: string, ...args: string[]): Promise<KubectlResult> {
    return runKubectl(configs[config] ?? '', join(ts.dir, `home-${n++}`), args);
  }

  it('kubectl version shows the server as v1.32.0, with no skew warning', async () => {
    const r = await kubectl('admin', 'version');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Server Version: v1.32.0');
    expect(r.stderr).not.toMatch(/WARNING/);
  });

  it('kubectl api-resources lists the registered resources from aggregated discovery alone', async () => {
    const r = await kubectl('admin', 'api-resources', '-v=6');
    expect(r.code, r.stderr).toBe(0);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s+/));
    expect(rows[0]).toEqual(['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND']);
    expect(rows.slice(1)).toEqual([
      ['componentstatuses', 'cs', 'v1', 'false', 'ComponentStatus'],
      ['namespaces', 'ns', 'v1', 'false', 'Namespace'],
      ['pods', 'po', 'v1', 'true', 'Pod'],
      ['deployments', 'deploy', 'apps/v1', 'true', 'Deployment'],
      ['leases', 'coordination.k8s.io/v1', 'true', 'Lease'],
    ]);
    // Aggregated discovery answered /api and /apis: kubectl asked for no group version on its own.
    expect(r.stderr).toMatch(/GET https:\/\/[^ ]+\/api\?timeout=32s 200 OK/);
    expect(r.stderr).toMatch(/GET https:\/\/[^ ]+\/apis\?timeout=32s 200 OK/);
    expect(r.stderr).not.toMatch(/\/api\/v1\?timeout|\/apis\/apps\/v1\?timeout/);
  });

  it('kubectl get --raw /readyz?verbose', async () => {
    const r = await kubectl('admin', 'get', '--raw', '/readyz?verbose');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('[+]ping ok\n[+]etcd ok\n[+]shutdown ok\nreadyz check passed\n');
  });

  it('a bearer token from the token file works too', async () => {
    const r = await kubectl('token', 'get', '--raw', '/api/v1/namespaces/default/pods/x');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ user: { name: 'bob' } });
  });

  it.each(['nobody', 'badtoken'])('%s: refused as kubectl prints it', async (config) => {
    const r = await kubectl(config, 'get', '--raw', '/api/v1/namespaces/default/pods');
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n').at(-1)).toBe('error: You must be logged in to the server (Unauthorized)');
  });

  it('Status errors come out as kubectl\'s error lines', async () => {
    const nf = await kubectl('admin', 'get', '--raw', '/api/v1/namespaces/default/pods/nope');
    expect(nf.code).toBe(1);
    expect(nf.stderr.trim()).toBe('Error from server (NotFound): pods "nope" not found');
    const path = await kubectl('admin', 'get', '--raw', '/api/v1/namespaces/default/foos');
    expect(path.stderr.trim()).toBe('Error from server (NotFound): the server could not find the requested resource');
    const unknown = await kubectl('admin', 'get', 'foos');
    expect(unknown.stderr.trim()).toBe('error: the server doesn\'t have a resource type "foos"');
  });
});
