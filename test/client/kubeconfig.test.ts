// Loading kubeconfigs as kubectl does: the file setpoint writes, files named relative to the kubeconfig,
// KUBECONFIG lists where the first file naming a thing wins, contexts and namespaces, and readable errors.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { renderKubeconfig } from '../../src/apiserver/pki/kubeconfig.js';
import { loadKubeconfig } from '../../src/client/kubeconfig.js';

const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('loadKubeconfig', () => {
  it('reads the kubeconfig setpoint writes', () => {
    const f = join(dir, 'admin');
    writeFileSync(f, renderKubeconfig({ server: 'https://127.0.0.1:6443/', caPem: 'CA', userName: 'admin', clientCertPem: 'CERT', clientKeyPem: 'KEY' }));
    const k = loadKubeconfig({ path: f });
    expect(k.config).toEqual({ server: 'https://127.0.0.1:6443', tls: { ca: 'CA', cert: 'CERT', key: 'KEY' } });
    expect([k.namespace, k.contextName]).toEqual(['default', 'setpoint']);
  });

  it('merges KUBECONFIG (first wins), resolves relative files, picks --context and its namespace', () => {
    writeFileSync(join(dir, 'ca.crt'), 'CA2');
    writeFileSync(join(dir, 'tok'), 'secret-token\n');
    const a = join(dir, 'a');
    const b = join(dir, 'b');
    writeFileSync(a, stringify({ 'current-context': 'one', contexts: [{ name: 'one', context: { cluster: 'c', user: 'u' } }], clusters: [{ name: 'c', cluster: { server: 'https://a:1', 'certificate-authority': 'ca.crt' } }] }));
    writeFileSync(b, stringify({ 'current-context': 'two', contexts: [{ name: 'two', context: { cluster: 'c', user: 'u', namespace: 'kube-system' } }], clusters: [{ name: 'c', cluster: { server: 'https://b:2' } }], users: [{ name: 'u', user: { tokenFile: 'tok' } }] }));
    const env = { KUBECONFIG: `${a}:${join(dir, 'missing')}:${b}` };
    const first = loadKubeconfig({ env });
    expect(first.config).toEqual({ server: 'https://a:1', tls: { ca: 'CA2' }, token: 'secret-token' });
    const two = loadKubeconfig({ env, context: 'two' });
    expect([two.config.server, two.namespace]).toEqual(['https://a:1', 'kube-system']);
  });

  it('reads the setpoint.io/endpoints extension: every API server, the cluster\'s own first', () => {
    const f = join(dir, 'multi');
    const all = ['https://127.0.0.1:6443', 'https://127.0.0.1:16443', 'https://127.0.0.1:26443'];
    writeFileSync(f, renderKubeconfig({ server: all, endpoints: all, caPem: 'CA', userName: 'admin', token: 't' }));
    expect(loadKubeconfig({ path: f }).config).toMatchObject({ server: all[0], endpoints: [all[1], all[2]] });
    expect(loadKubeconfig({ path: f, context: 'setpoint-2' }).config).toMatchObject({ server: all[1], endpoints: [all[0], all[2]] });
    const bad = join(dir, 'bad-ext');
    writeFileSync(bad, stringify({ 'current-context': 'c', contexts: [{ name: 'c', context: { cluster: 'c' } }], clusters: [{ name: 'c', cluster: { server: 'https://a:1', extensions: [{ name: 'setpoint.io/endpoints', extension: { servers: ['a:2'] } }] } }] }));
    expect(() => loadKubeconfig({ path: bad })).toThrow('kubeconfig: cluster "c" extension setpoint.io/endpoints: "a:2" is not an http(s) URL');
  });

  it('says what is wrong in one line', () => {
    const bad = join(dir, 'bad');
    writeFileSync(bad, 'clusters: [');
    expect(() => loadKubeconfig({ path: bad })).toThrow(/is not valid YAML/);
    expect(() => loadKubeconfig({ path: join(dir, 'nope') })).toThrow(/cannot read .*nope: ENOENT/);
    const noCtx = join(dir, 'noctx');
    writeFileSync(noCtx, stringify({ clusters: [] }));
    expect(() => loadKubeconfig({ path: noCtx })).toThrow('kubeconfig: no current-context is set; pass --context');
    expect(() => loadKubeconfig({ path: join(dir, 'admin'), context: 'x' })).toThrow('kubeconfig: context "x" not found');
  });
});
