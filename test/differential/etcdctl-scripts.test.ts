// etcdctl 3.4 against a 3-member etcd 3.4 cluster and a 3-member Setpoint cluster, started with the same
// flags: every script in scripts/*.txt runs on both (each script on fresh clusters, so revisions line
// up), and every step's exit code, stdout and stderr must be equal once normalized (normalize.ts says
// what legitimately differs). A step marked @known=<id> is a divergence documented in
// KNOWN-DIVERGENCES.md: it must still differ, so fixing one makes its marker go too.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBoth } from '../../src/harness/store-cluster.js';
import type { StoreCluster } from '../../src/harness/store-cluster.js';
import { issueCert, makeCa } from '../../src/harness/tls-files.js';
import { suiteClusters } from '../helpers/suite-clusters.js';
import { parseScript } from './script.js';
import { SideRunner } from './side-runner.js';
import type { StepRecord } from './side-runner.js';

const here = dirname(fileURLToPath(import.meta.url));
const scriptDir = join(here, 'scripts');
const known = readFileSync(join(here, 'KNOWN-DIVERGENCES.md'), 'utf8');
/** The users a TLS script may present a certificate of ({cert:root} {key:root}). */
const CERT_USERS = ['root', 'alice', 'nobody'];
const scripts = readdirSync(scriptDir)
  .filter((f) => f.endsWith('.txt'))
  .sort();

function view(r: StepRecord | undefined): object | undefined {
  return r && { code: r.code, stdout: r.stdout, stderr: r.stderr };
}

describe.each(scripts)('etcdctl script %s: Setpoint answers as etcd 3.4 does', (file) => {
  const source = readFileSync(join(scriptDir, file), 'utf8');
  const steps = parseScript(source);
  // `#! tls` on a line of its own: both clusters serve clients over TLS with client certificates.
  const certDir = /^#!\s*tls\s*$/m.test(source) ? mkdtempSync(join(tmpdir(), 'setpoint-diff-certs-')) : undefined;
  // DIFF_KEEP=1 keeps the clusters' data dirs and logs (their paths are printed); a failure keeps them too.
  const clusters = suiteClusters(process.env['DIFF_KEEP'] === '1');
  let etcd: StoreCluster | undefined;
  let setpoint: StoreCluster | undefined;

  beforeAll(async () => {
    // The CA also signs one client certificate per user the scripts name ({cert:root}: CN root).
    const ca = certDir !== undefined ? makeCa(certDir, 'client-ca') : undefined;
    const tls = certDir !== undefined && ca ? issueCert(certDir, 'client', ca) : undefined;
    if (certDir !== undefined && ca) for (const user of CERT_USERS) issueCert(certDir, user, ca);
    const both = await startBoth({ spare: 1, token: 'differential', label: 'setpoint-diff-', ...(tls ? { tls } : {}) });
    etcd = clusters.track(both.etcd);
    setpoint = clusters.track(both.setpoint);
  }, 60_000);

  afterAll(() => {
    if (certDir !== undefined) rmSync(certDir, { recursive: true, force: true });
  });

  it('every step matches', async () => {
    if (!etcd || !setpoint) throw new Error('clusters did not start');
    const [ref, ours] = await Promise.all([SideRunner.create(etcd).then((r) => r.run(steps)), SideRunner.create(setpoint).then((r) => r.run(steps))]);
    // DIFF_DUMP=<dir> keeps both normalized transcripts, to read a failure (or a new script) side by side.
    const dump = process.env['DIFF_DUMP'];
    if (dump) {
      writeFileSync(join(dump, `${file}.etcd.json`), JSON.stringify(ref, null, 1));
      writeFileSync(join(dump, `${file}.setpoint.json`), JSON.stringify(ours, null, 1));
    }
    expect(ours.length).toBe(ref.length);
    ref.forEach((theirs, i) => {
      const mine = ours[i];
      const where = `${file}:${theirs.line}: ${theirs.text}`;
      if (theirs.known !== undefined) {
        expect.soft(known, `${where}: @known=${theirs.known} is not in KNOWN-DIVERGENCES.md`).toContain(`## ${theirs.known}`);
        expect.soft(view(mine), `${where}: documented as a divergence, but the outputs now agree — remove the marker`).not.toEqual(view(theirs));
      } else {
        expect.soft(view(mine), where).toEqual(view(theirs));
      }
    });
  }, 240_000);
});
