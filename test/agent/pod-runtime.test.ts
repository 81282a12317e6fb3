// The runtime with real processes: restarts, crash loops, probes, graceful termination, pod addresses,
// configuration errors, logs.
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../src/harness/wait.js';
import { Fixture, containerStatus, pod, readAll, waitContainer } from './runtime-fixture.js';

let fx: Fixture;
beforeEach(() => {
  fx = new Fixture();
});
afterEach(async () => {
  await fx.cleanup();
});

const SLEEP = ['sh', '-c', 'echo hello; exec sleep 1000'];

function get(host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host, port, path: '/' }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('PodRuntime with real processes', () => {
  it('restarts a killed container once, with the kill in lastState', async () => {
    const rt = fx.runtime();
    const p = pod('web', { containers: [{ name: 'app', command: SLEEP }] });
    rt.syncPod(p);
    await waitContainer(rt, p, 'running', (c) => c.state.running !== undefined && c.ready);
    expect(rt.status(p.metadata.uid ?? '')?.phase).toBe('Running');
    expect(rt.status(p.metadata.uid ?? '')?.podIP).toMatch(/^127\.1\.\d+\.\d+$/);
    const pid = rt.pids(p.metadata.uid ?? '').app;
    expect(pid).toBeDefined();
    process.kill(-(pid ?? 0), 'SIGKILL');
    const c = await waitContainer(rt, p, 'restarted', (s) => s.restartCount === 1 && s.state.running !== undefined);
    expect(c.lastState.terminated?.exitCode).toBe(137);
    expect(c.lastState.terminated?.reason).toBe('Error');
    expect(rt.pids(p.metadata.uid ?? '').app).not.toBe(pid);
  });

  it('logs only what the container wrote when its program is killed, not the wrapper shell\'s report', async () => {
    const rt = fx.runtime();
    const p = pod('quiet', { containers: [{ name: 'app', command: ['sh', '-c', 'echo pid $$$$; echo to-stderr >&2; exec sleep 1000'] }] });
    const uid = p.metadata.uid ?? '';
    rt.syncPod(p);
    await waitContainer(rt, p, 'running', (c) => c.state.running !== undefined);
    let seen = '';
    const pid = Number(await waitFor('the pid logged', async () => /^pid (\d+)$/m.exec((seen = await readAll(rt.logs(uid, 'app'))))?.[1], { detail: () => JSON.stringify(seen) }));
    expect(pid).not.toBe(rt.pids(uid).app); // the program, not the group's leader
    process.kill(pid, 'SIGKILL');
    const c = await waitContainer(rt, p, 'restarted', (s) => s.restartCount === 1);
    expect(c.lastState.terminated?.exitCode).toBe(137);
    expect(await readAll(rt.logs(uid, 'app', { previous: true }))).toBe(`pid ${pid}\nto-stderr\n`);
  });

  it('puts a container that exits 1 into CrashLoopBackOff with a growing back-off', async () => {
    const rt = fx.runtime();
    const p = pod('crash', { containers: [{ name: 'app', command: ['sh', '-c', 'exit 1'] }] });
    rt.syncPod(p);
    const seen = new Set<string>();
    await waitFor('three back-off steps', () => {
      const c = containerStatus(rt, p);
      if (c?.state.waiting?.reason === 'CrashLoopBackOff') seen.add(c.state.waiting.message ?? '');
      return seen.size >= 3;
    }, { intervalMs: 20, detail: () => [...seen].join(' | ') });
    const delays = [...seen].map((m) => /back-off (\S+) restarting failed container=app pod=crash_default\(/.exec(m)?.[1]);
    expect(delays.slice(0, 3)).toEqual(['300ms', '600ms', '1.2s']);
    const c = containerStatus(rt, p);
    expect(c?.lastState.terminated?.exitCode).toBe(1);
    expect(c?.restartCount).toBeGreaterThanOrEqual(2);
    expect(fx.events.some((e) => e.reason === 'BackOff' && e.message.startsWith('Back-off restarting failed container app in pod crash_default('))).toBe(true);
  });

  it('does not restart a container that completed under OnFailure, and the pod Succeeds', async () => {
    const rt = fx.runtime();
    const p = pod('job', { restartPolicy: 'OnFailure', containers: [{ name: 'app', command: ['true'] }] });
    rt.syncPod(p);
    await waitFor('Succeeded', () => rt.status(p.metadata.uid ?? '')?.phase === 'Succeeded');
    const c = containerStatus(rt, p);
    expect(c?.state.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(c?.restartCount).toBe(0);
  });

  it('restarts a container whose liveness probe fails', async () => {
    const rt = fx.runtime();
    const p = pod('live', {
      containers: [{ name: 'app', command: SLEEP, livenessProbe: { exec: { command: ['false'] }, periodSeconds: 1, failureThreshold: 1 } }],
    });
    rt.syncPod(p);
    await waitContainer(rt, p, 'restart after liveness failure', (c) => c.restartCount >= 1);
    expect(fx.events.some((e) => e.reason === 'Unhealthy' && e.message.startsWith('Liveness probe failed'))).toBe(true);
    expect(fx.events.some((e) => e.reason === 'Killing' && e.message === 'Container app failed liveness probe, will be restarted')).toBe(true);
  });

  it('keeps a container whose readiness probe fails running but not ready', async () => {
    const rt = fx.runtime();
    const p = pod('unready', {
      containers: [{ name: 'app', command: SLEEP, readinessProbe: { tcpSocket: { port: 1 }, periodSeconds: 1, failureThreshold: 1 } }],
    });
    rt.syncPod(p);
    await waitFor('an Unhealthy readiness event', () => fx.events.some((e) => e.reason === 'Unhealthy' && e.message.startsWith('Readiness probe failed: dial tcp')));
    const st = rt.status(p.metadata.uid ?? '');
    expect(st?.phase).toBe('Running');
    expect(st?.containerStatuses?.[0]?.ready).toBe(false);
    expect(st?.containerStatuses?.[0]?.restartCount).toBe(0);
    expect(st?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [app]' });
  });

  it('becomes ready once an httpGet readiness probe answers, after the startup probe', async () => {
    const rt = fx.runtime();
    const server = `require('http').createServer((q, r) => r.end('ok')).listen(8080, process.env.POD_IP)`;
    const p = pod('ready', {
      containers: [{
        name: 'app',
        command: ['node', '-e', server],
        ports: [{ name: 'http', containerPort: 8080 }],
        startupProbe: { tcpSocket: { port: 'http' }, periodSeconds: 1, failureThreshold: 30 },
        readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 1 },
      }],
    });
    rt.syncPod(p);
    await waitFor('Ready', () => rt.status(p.metadata.uid ?? '')?.conditions?.find((c) => c.type === 'Ready')?.status === 'True');
    expect(containerStatus(rt, p)?.started).toBe(true);
  });

  it('runs preStop, then SIGTERM, then SIGKILL after the grace period', async () => {
    const rt = fx.runtime();
    const p = pod('stubborn', {
      terminationGracePeriodSeconds: 2,
      containers: [{
        name: 'app',
        command: ['sh', '-c', 'trap "echo got TERM" TERM; echo started; while true; do sleep 0.1; done'],
        lifecycle: { preStop: { exec: { command: ['sh', '-c', 'echo stop > "$SETPOINT_ROOT/prestop"'] } } },
      }],
    });
    rt.syncPod(p);
    await waitContainer(rt, p, 'running', (c) => c.state.running !== undefined);
    await waitFor('output', async () => (await readAll(rt.logs(p.metadata.uid ?? '', 'app'))).includes('started'));
    rt.syncPod({ ...p, metadata: { ...p.metadata, deletionTimestamp: new Date().toISOString(), deletionGracePeriodSeconds: 2 } });
    await waitFor('terminated', () => rt.isTerminated(p.metadata.uid ?? ''));
    const c = containerStatus(rt, p);
    expect(c?.state.terminated?.exitCode).toBe(137); // it ignored SIGTERM: SIGKILL ended it
    expect(rt.status(p.metadata.uid ?? '')?.phase).toBe('Failed');
    expect(readFileSync(join(fx.root, 'pods', p.metadata.uid ?? '', 'root', 'app', 'prestop'), 'utf8')).toBe('stop\n');
    const log = await readAll(rt.logs(p.metadata.uid ?? '', 'app'));
    expect(log).toContain('got TERM');
  });

  it('ends a container that heeds SIGTERM with 143, no SIGKILL needed', async () => {
    const rt = fx.runtime();
    const p = pod('polite', { terminationGracePeriodSeconds: 30, containers: [{ name: 'app', command: ['sleep', '1000'] }] });
    rt.syncPod(p);
    await waitContainer(rt, p, 'running', (c) => c.state.running !== undefined);
    await rt.terminatePod(p.metadata.uid ?? '');
    expect(containerStatus(rt, p)?.state.terminated).toMatchObject({ exitCode: 143, signal: 15, reason: 'Error' });
  });

  it('gives three pods their own address, all listening on the same port', async () => {
    const rt = fx.runtime();
    const server = `require('http').createServer((q, r) => r.end(process.env.NAME)).listen(8080, process.env.POD_IP)`;
    const pods = ['a', 'b', 'c'].map((n) =>
      pod(`web-${n}`, { containers: [{ name: 'app', command: ['node', '-e', server], env: [{ name: 'NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }], readinessProbe: { httpGet: { port: 8080 }, periodSeconds: 1 } }] }),
    );
    for (const p of pods) rt.syncPod(p);
    for (const p of pods) await waitContainer(rt, p, 'ready', (c) => c.ready);
    const ips = pods.map((p) => rt.status(p.metadata.uid ?? '')?.podIP ?? '');
    expect(new Set(ips).size).toBe(3);
    const answers = await Promise.all(ips.map((ip) => get(ip, 8080)));
    expect(answers).toEqual(['web-a', 'web-b', 'web-c']);
  });

  it('reports a container with no command as waiting, not crashed', async () => {
    const rt = fx.runtime();
    const p = pod('nocmd', { containers: [{ name: 'app', image: 'nginx' }] });
    rt.syncPod(p);
    const c = await waitContainer(rt, p, 'a waiting reason', (s) => s.state.waiting?.reason === 'CreateContainerError');
    expect(c.state.waiting?.message).toBe('no command specified');
    expect(c.restartCount).toBe(0);
    expect(rt.status(p.metadata.uid ?? '')?.phase).toBe('Pending');
  });

  it('reports a command that does not exist as StartError and backs off', async () => {
    const rt = fx.runtime();
    const p = pod('badcmd', { containers: [{ name: 'app', command: ['no-such-program-xyz'] }] });
    rt.syncPod(p);
    const c = await waitContainer(rt, p, 'CrashLoopBackOff', (s) => s.state.waiting?.reason === 'CrashLoopBackOff');
    expect(c.lastState.terminated).toMatchObject({ exitCode: 128, reason: 'StartError', message: 'exec: "no-such-program-xyz": executable file not found in $PATH' });
  });

  it('reports a missing ConfigMap key as CreateContainerConfigError, then starts once it appears', async () => {
    const rt = fx.runtime();
    fx.configMaps.set('default/cfg', { data: { other: 'x' } });
    const p = pod('cfgkey', { containers: [{ name: 'app', command: SLEEP, env: [{ name: 'V', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'want' } } }] }] });
    rt.syncPod(p);
    const c = await waitContainer(rt, p, 'config error', (s) => s.state.waiting?.reason === 'CreateContainerConfigError');
    expect(c.state.waiting?.message).toBe("couldn't find key want in ConfigMap default/cfg");
    expect(fx.events.some((e) => e.reason === 'Failed' && e.message === "Error: couldn't find key want in ConfigMap default/cfg")).toBe(true);
    fx.configMaps.set('default/cfg', { data: { want: 'yes' } });
    await waitContainer(rt, p, 'running', (s) => s.state.running !== undefined);
    expect(containerStatus(rt, p)?.restartCount).toBe(0);
  });

  it('holds a pod whose volume references a missing ConfigMap in ContainerCreating with FailedMount', async () => {
    const rt = fx.runtime();
    const p = pod('novol', { volumes: [{ name: 'conf', configMap: { name: 'missing' } }], containers: [{ name: 'app', command: SLEEP }] });
    rt.syncPod(p);
    await waitFor('FailedMount', () => fx.events.some((e) => e.reason === 'FailedMount' && e.message === 'MountVolume.SetUp failed for volume "conf" : configmap "missing" not found'));
    expect(containerStatus(rt, p)?.state.waiting?.reason).toBe('ContainerCreating');
  });

  it('materialises volumes and env, and runs init containers in order first', async () => {
    const rt = fx.runtime();
    fx.configMaps.set('default/cfg', { data: { 'app.conf': 'port=80\n', extra: 'e' } });
    fx.secrets.set('default/sec', { data: { token: Buffer.from('s3cret').toString('base64') } });
    const p = pod('vols', {
      restartPolicy: 'Never',
      volumes: [
        { name: 'conf', configMap: { name: 'cfg', items: [{ key: 'app.conf', path: 'conf/app.conf' }] } },
        { name: 'sec', secret: { secretName: 'sec', defaultMode: 0o400 } },
        { name: 'scratch', emptyDir: {} },
        { name: 'info', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
      ],
      initContainers: [
        { name: 'one', command: ['sh', '-c', 'echo one >> "$SETPOINT_VOLUME_SCRATCH/order"'], volumeMounts: [{ name: 'scratch', mountPath: '/work' }] },
        { name: 'two', command: ['sh', '-c', 'echo two >> work/order'], volumeMounts: [{ name: 'scratch', mountPath: '/work' }] },
      ],
      containers: [{
        name: 'app',
        command: ['sh', '-c', 'cat etc/app/conf/app.conf "$SETPOINT_VOLUME_SEC/token" "$SETPOINT_VOLUME_INFO/labels"; echo; cat work/order; echo "tok=$TOKEN ip=$POD_IP $(GREETING)"'],
        env: [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'sec', key: 'token' } } }, { name: 'GREETING', value: 'hi' }, { name: 'MSG', value: '$(GREETING) there' }],
        volumeMounts: [{ name: 'conf', mountPath: '/etc/app' }, { name: 'sec', mountPath: '/secret' }, { name: 'scratch', mountPath: '/work' }, { name: 'info', mountPath: '/info' }],
      }],
    });
    rt.syncPod(p);
    await waitFor('Succeeded', () => rt.status(p.metadata.uid ?? '')?.phase === 'Succeeded', { detail: () => JSON.stringify(rt.status(p.metadata.uid ?? '')) });
    const log = await readAll(rt.logs(p.metadata.uid ?? '', 'app'));
    const ip = rt.status(p.metadata.uid ?? '')?.podIP ?? '';
    expect(log).toBe(`port=80\ns3cretapp="vols"\none\ntwo\ntok=s3cret ip=${ip} hi\n`); // $(VAR) in command is expanded, as Kubernetes does
    const st = rt.status(p.metadata.uid ?? '');
    expect(st?.conditions?.find((c) => c.type === 'Initialized')?.status).toBe('True');
    expect(st?.initContainerStatuses?.map((c) => c.state.terminated?.reason)).toEqual(['Completed', 'Completed']);
  });

  it('keeps the pod Failed when an init container fails under restartPolicy Never', async () => {
    const rt = fx.runtime();
    const p = pod('initfail', { restartPolicy: 'Never', initContainers: [{ name: 'init', command: ['sh', '-c', 'exit 2'] }], containers: [{ name: 'app', command: SLEEP }] });
    rt.syncPod(p);
    await waitFor('Failed', () => rt.status(p.metadata.uid ?? '')?.phase === 'Failed');
    expect(containerStatus(rt, p, 'app')?.state.waiting?.reason).toBe('PodInitializing');
    expect(rt.status(p.metadata.uid ?? '')?.conditions?.find((c) => c.type === 'Initialized')).toMatchObject({ status: 'False', reason: 'ContainersNotInitialized', message: 'containers with incomplete status: [init]' });
  });

  it('removes a pod: processes gone, directory gone, address released', async () => {
    const rt = fx.runtime();
    const p = pod('gone', { containers: [{ name: 'app', command: SLEEP }] });
    rt.syncPod(p);
    await waitContainer(rt, p, 'running', (c) => c.state.running !== undefined);
    const pid = rt.pids(p.metadata.uid ?? '').app ?? 0;
    await rt.removePod(p.metadata.uid ?? '', 0);
    expect(existsSync(join(fx.root, 'pods', p.metadata.uid ?? ''))).toBe(false);
    expect(() => process.kill(pid, 0)).toThrow();
    expect(rt.uids()).toEqual([]);
  });
});
