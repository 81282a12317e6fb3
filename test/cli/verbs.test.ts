// The client verbs as a user meets them: the real `setpoint` process against a real API server on etcd 3.4,
// output lines asserted, and `get` compared column for column with the real kubectl on the same objects.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { registerChild } from '../../src/harness/children.js';
import { setpointMain } from '../../src/harness/setpoint-main.js';
import { waitFor } from '../../src/harness/wait.js';
import { runKubectl } from '../apiserver/helpers/kubectl-runner.js';
import { startRegistryServer, type RegistryServer } from '../apiserver/registry/registry-server.js';
import { cliRunner, type CliRunner } from './helpers/cli-runner.js';

const DEPLOY = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
`;
const CM = (name: string, v = '1'): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  labels: {tier: cfg}\ndata:\n  a: "${v}"\n`;

describe('setpoint client verbs', () => {
  let s: RegistryServer;
  let cli: CliRunner;
  let n = 0;
  const kubectl = async (...args: string[]): Promise<string> => {
    const r = await runKubectl(cli.kubeconfig, join(cli.dir, `kubectl-home-${n++}`), args);
    expect(r.code, r.stderr).toBe(0);
    return r.stdout;
  };

  beforeAll(async () => {
    s = await startRegistryServer('etcd');
    cli = cliRunner(s);
  }, 120_000);
  afterAll(async () => {
    await s?.stop();
  });

  it('applies multi-document YAML: created, unchanged, configured', async () => {
    const f = cli.file('all.yaml', `${DEPLOY}---\n${CM('one')}`);
    expect(await cli.ok('apply', '-f', f)).toBe('deployment.apps/web created\nconfigmap/one created\n');
    expect(await cli.ok('apply', '-f', f)).toBe('deployment.apps/web unchanged\nconfigmap/one unchanged\n');
    cli.file('all.yaml', `${DEPLOY.replace('replicas: 2', 'replicas: 3')}---\n${CM('one')}`);
    expect(await cli.ok('apply', '-f', f)).toBe('deployment.apps/web configured\nconfigmap/one unchanged\n');
    const got = JSON.parse(await cli.ok('get', 'deploy', 'web', '-o', 'json')) as { spec: { replicas: number }; metadata: { managedFields?: unknown } };
    expect(got.spec.replicas).toBe(3);
    expect(got.metadata.managedFields).toBeUndefined();
  });

  it('applies a folder with -R and stdin', async () => {
    mkdirSync(join(cli.dir, 'tree', 'sub'), { recursive: true });
    cli.file('tree/a.yaml', CM('tree-a'));
    cli.file('tree/sub/b.json', JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'tree-b' }, data: { a: '1' } }));
    expect(await cli.ok('apply', '-f', join(cli.dir, 'tree'))).toBe('configmap/tree-a created\n');
    expect(await cli.ok('apply', '-R', '-f', join(cli.dir, 'tree'))).toBe('configmap/tree-a unchanged\nconfigmap/tree-b created\n');
    const r = await cli.run(['apply', '-f', '-'], { input: CM('from-stdin') });
    expect(r.stdout).toBe('configmap/from-stdin created\n');
  });

  it('prints get tables with the same columns and layout as kubectl', async () => {
    for (const args of [['get', 'deploy'], ['get', 'cm', '-l', 'tier=cfg'], ['get', 'deploy', '-o', 'wide'], ['get', 'cm', '-A'], ['get', 'ns'], ['get', 'deploy,cm']]) {
      const ours = await cli.ok(...args);
      const theirs = await kubectl(...args);
      // AGE may tick between the two runs: compare everything else exactly.
      const strip = (t: string): string => t.replace(/\b\d+(s|m\d*s?|h\d*m?)\b/g, 'AGE');
      expect(strip(ours), args.join(' ')).toBe(strip(theirs));
    }
  });

  it('prints names, yaml, and kubectl\'s empty and error lines', async () => {
    expect(await cli.ok('get', 'deployments.apps', '-o', 'name')).toBe('deployment.apps/web\n');
    expect(await cli.ok('get', 'cm/one', '-o', 'yaml')).toMatch(/^apiVersion: v1\ndata:\n {2}a: "1"\nkind: ConfigMap\nmetadata:\n/);
    const none = await cli.run(['get', 'pods']);
    expect(none.code).toBe(0);
    expect(none.stderr).toBe('No resources found in default namespace.\n');
    const missing = await cli.run(['get', 'pods', 'x']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('Error from server (NotFound): pods "x" not found\n');
    const unknown = await cli.run(['get', 'frobs']);
    expect(unknown.stderr).toBe('error: the server doesn\'t have a resource type "frobs"\n');
    const field = await cli.ok('get', 'cm', '--field-selector', 'metadata.name=one', '-o', 'name');
    expect(field).toBe('configmap/one\n');
  });

  it('says in one line when the kubeconfig is missing', async () => {
    const r = await cli.run(['get', 'pods'], { env: { KUBECONFIG: join(cli.dir, 'nope') } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: kubeconfig: cannot read .*nope: ENOENT\n$/);
  });

  it('answers bad input and an unreachable server with one line and exit 1, never a stack trace', async () => {
    const cases: [string[], string | undefined, RegExp][] = [
      [['apply', '-f', join(cli.dir, 'nope.yaml')], undefined, /^error: the path ".*nope\.yaml" does not exist\n$/],
      [['apply', '-f', '-'], 'a: [\n', /^error: error parsing STDIN: .*\n$/],
      [['apply', '-f', '-'], 'apiVersion: v1\nkind: Frob\nmetadata: {name: x}\n', /^error: resource mapping not found for name: "x" namespace: "" from "STDIN": no matches for kind "Frob" in version "v1"\n/],
      [['apply', '-f', '-'], 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: BAD}\n', /^Error from server \(Invalid\): ConfigMap "BAD" is invalid: metadata\.name: Invalid value: "BAD"/],
      [['get', 'pods', '-o', 'foo'], undefined, /^error: unable to match a printer suitable for the output format "foo"/],
      [['get', 'pods', '--context', 'nope'], undefined, /^error: kubeconfig: context "nope" not found\n$/],
    ];
    for (const [args, input, want] of cases) {
      const r = await cli.run(args, input !== undefined ? { input } : {});
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr, args.join(' ')).toMatch(want);
    }
    const port = new URL(s.ts.url).port;
    const dead = cli.file('dead.kubeconfig', readFileSync(cli.kubeconfig, 'utf8').replace(`:${port}`, ':1'));
    const r = await cli.run(['get', 'pods', '--kubeconfig', dead]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?\n');
  });

  it('watches with -w: the table, then a row per change under the same columns', async () => {
    const child = spawn(process.execPath, [setpointMain(), 'get', 'cm', 'one', '-w'], { env: { ...process.env, KUBECONFIG: cli.kubeconfig } });
    registerChild(child);
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    try {
      await waitFor('the first table', () => text.includes('one'), { timeoutMs: 30_000 });
      cli.file('one.yaml', CM('one', '2'));
      await cli.ok('apply', '-f', join(cli.dir, 'one.yaml'));
      await waitFor('a second row', () => text.split('\n').filter((l) => l.startsWith('one')).length >= 2, { timeoutMs: 30_000 });
      const lines = text.split('\n');
      expect(lines[0]).toMatch(/^NAME {3}DATA {3}AGE$/);
      expect(lines[2]).toMatch(/^one {4}1 {6}\S+$/);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('describes a deployment as kubectl does', async () => {
    const strip = (t: string): string => t.replace(/\b\d+(s|m\d*s?|h\d*m?)\b/g, 'AGE');
    expect(strip(await cli.ok('describe', 'deployment', 'web'))).toBe(strip(await kubectl('describe', 'deployment', 'web')));
    expect(await cli.ok('describe', 'cm', 'one')).toBe(await kubectl('describe', 'cm', 'one'));
  });

  it('describes a pod with container statuses and a replica set with a condition as kubectl does', async () => {
    const patch = { 'content-type': 'application/merge-patch+json' };
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'desc-pod', labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'busybox', command: ['sleep', '1000'], ports: [{ containerPort: 80 }], env: [{ name: 'A', value: '1' }], resources: { requests: { cpu: '100m' }, limits: { cpu: '200m' } } }] } };
    expect((await s.call('POST', '/api/v1/namespaces/default/pods', pod)).status).toBe(201);
    const st = {
      status: {
        phase: 'Running',
        podIP: '10.0.0.5',
        podIPs: [{ ip: '10.0.0.5' }],
        startTime: '2026-12-02T15:00:00Z',
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-12-02T15:00:00Z' }],
        containerStatuses: [{ name: 'c', ready: true, restartCount: 2, image: 'busybox', imageID: 'sha:1', containerID: 'proc://1', state: { running: { startedAt: '2026-12-02T15:00:00Z' } }, lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt: '2026-12-02T14:00:00Z', finishedAt: '2026-12-02T14:59:00Z' } } }],
      },
    };
    expect((await s.call('PATCH', '/api/v1/namespaces/default/pods/desc-pod/status', st, patch)).status).toBe(200);
    expect(await cli.ok('describe', 'pod', 'desc-pod')).toBe(await kubectl('describe', 'pod', 'desc-pod'));
    const rs = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'desc-rs' }, spec: { replicas: 2, selector: { matchLabels: { app: 'r' } }, template: { metadata: { labels: { app: 'r' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } } } };
    expect((await s.call('POST', '/apis/apps/v1/namespaces/default/replicasets', rs)).status).toBe(201);
    const rsStatus = { status: { replicas: 1, conditions: [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'denied', lastTransitionTime: '2026-12-02T15:00:00Z' }] } };
    expect((await s.call('PATCH', '/apis/apps/v1/namespaces/default/replicasets/desc-rs/status', rsStatus, patch)).status).toBe(200);
    expect(await cli.ok('describe', 'rs', 'desc-rs')).toBe(await kubectl('describe', 'rs', 'desc-rs'));
    await cli.ok('delete', 'pod/desc-pod', 'rs/desc-rs', '--grace-period', '0');
  });

  it('lists events oldest first, narrowed with --for', async () => {
    const uid = (JSON.parse(await cli.ok('get', 'deploy', 'web', '-o', 'json')) as { metadata: { uid: string } }).metadata.uid;
    const ev = (name: string, reason: string, type: string, at: string, count = 1): string =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name },
        involvedObject: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'default', uid },
        reason,
        message: `${reason} happened`,
        type,
        count,
        firstTimestamp: at,
        lastTimestamp: at,
        source: { component: 'deployment-controller' },
      });
    await cli.run(['apply', '-f', '-'], { input: `${ev('web.b', 'Later', 'Warning', new Date(Date.now() - 60_000).toISOString())}\n---\n${ev('web.a', 'Earlier', 'Normal', new Date(Date.now() - 600_000).toISOString())}` });
    const lines = (await cli.ok('events', '--for', 'deployment/web')).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
    expect(lines[1]).toMatch(/^10m\S*\s+Normal\s+Earlier\s+Deployment\/web\s+Earlier happened$/);
    expect(lines[2]).toMatch(/^6\ds\s+Warning\s+Later\s+Deployment\/web\s+Later happened$/);
    const all = await cli.ok('events', '-A');
    expect(all.split('\n')[0]).toMatch(/^NAMESPACE\s+LAST SEEN/);
    const desc = await cli.ok('describe', 'deploy', 'web');
    expect(desc).toMatch(/Events:\n {2}Type\s+Reason\s+Age\s+From\s+Message\n {2}----/);
    expect(desc).toMatch(/Warning\s+Later\s+\d+s\s+deployment-controller\s+Later happened/);
  });

  it('deletes by name, by label and from a file, waiting until gone', async () => {
    expect(await cli.ok('delete', 'cm', 'tree-a')).toBe('configmap "tree-a" deleted\n');
    const again = await cli.run(['delete', 'cm', 'tree-a']);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('Error from server (NotFound): configmaps "tree-a" not found\n');
    expect(await cli.ok('delete', 'cm', '-l', 'tier=cfg', '--grace-period', '0')).toBe('configmap "from-stdin" deleted\nconfigmap "one" deleted\n');
    // The file also names configmap/one, gone already: kubectl's line for it, the rest still done, exit 1.
    const fromFile = await cli.run(['delete', '-f', join(cli.dir, 'all.yaml'), '--cascade', 'background']);
    expect(fromFile.stdout).toBe('deployment.apps "web" deleted\n');
    expect(fromFile.stderr).toBe('Error from server (NotFound): configmaps "one" not found\n');
    expect(fromFile.code).toBe(1);
    const gone = await cli.run(['get', 'deploy']);
    expect(gone.stderr).toBe('No resources found in default namespace.\n');
  });
});
