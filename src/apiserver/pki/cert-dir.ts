// --cert-dir: where the API server keeps the certificates it makes for itself when none are given — the
// cluster CA (ca.crt, ca.key) and its serving certificate (apiserver.crt, apiserver.key). Made on first
// start and kept: a later start reuses them, and reissues only the serving certificate when it has
// expired or lacks a name it must now cover. Files are written atomically (temp file, fsync, rename),
// keys 0600, under a lock file so API servers sharing a directory agree on one CA.
import { constants } from 'node:fs';
import { readFileSync } from 'node:fs';
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CertificateError, checkCa, coversSans, createCa, isIssuedBy, issueServingCert, type KeyPair } from './certificates.js';

export const CERT_DIR_FILES = {
  caCert: 'ca.crt',
  caKey: 'ca.key',
  servingCert: 'apiserver.crt',
  servingKey: 'apiserver.key',
} as const;

/** The cluster CA an API server made in its --cert-dir. */
export function readCertDirCa(certDir: string): KeyPair {
  return { certPem: readFileSync(join(certDir, CERT_DIR_FILES.caCert), 'utf8'), keyPem: readFileSync(join(certDir, CERT_DIR_FILES.caKey), 'utf8') };
}

/** A serving certificate this close to expiry is reissued at start. */
const RENEW_MARGIN_MS = 30 * 86_400_000;
/** How long to wait for another process holding the lock before giving up. */
const LOCK_WAIT_MS = 30_000;
const LOCK_POLL_MS = 50;

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** Writes `path` so that a reader sees the old bytes or the new, never a part; fsyncs file and directory. */
export async function writeFileAtomic(path: string, data: string, mode: number): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`;
  const fh = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, mode);
  try {
    await fh.writeFile(data);
    await fh.chmod(mode); // the umask may have narrowed or the file may have existed
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
  const dir = await open(join(path, '..'), constants.O_RDONLY);
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Runs `fn` holding `<dir>/.lock` (O_EXCL, with this pid); a lock whose process is gone is taken over. */
async function withLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const lock = join(dir, '.lock');
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const fh = await open(lock, 'wx', 0o600);
      await fh.writeFile(String(process.pid));
      await fh.close();
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const holder = Number((await readIfExists(lock)) ?? '');
      if (Number.isSafeInteger(holder) && holder > 0 && !alive(holder)) {
        await unlink(lock).catch(() => {});
        continue;
      }
      if (Date.now() > deadline) throw new CertificateError(`${lock} is held by process ${holder || 'unknown'}`);
      await sleep(LOCK_POLL_MS);
    }
  }
  try {
    return await fn();
  } finally {
    await unlink(lock).catch(() => {});
  }
}

async function loadPair(dir: string, certName: string, keyName: string): Promise<KeyPair | 'missing' | 'partial'> {
  const certPem = await readIfExists(join(dir, certName));
  const keyPem = await readIfExists(join(dir, keyName));
  if (certPem === undefined && keyPem === undefined) return 'missing';
  if (certPem === undefined || keyPem === undefined) return 'partial';
  return { certPem, keyPem };
}

async function writePair(dir: string, certName: string, keyName: string, pair: KeyPair): Promise<void> {
  // The key first: a reader that finds the certificate finds its key too.
  await writeFileAtomic(join(dir, keyName), pair.keyPem, 0o600);
  await writeFileAtomic(join(dir, certName), pair.certPem, 0o644);
}

async function caIn(dir: string): Promise<{ ca: KeyPair; created: boolean }> {
  const found = await loadPair(dir, CERT_DIR_FILES.caCert, CERT_DIR_FILES.caKey);
  if (found === 'partial') {
    throw new CertificateError(`${dir} has only one of ${CERT_DIR_FILES.caCert} and ${CERT_DIR_FILES.caKey}: restore the other or remove both`);
  }
  if (found !== 'missing') {
    checkCa(found);
    return { ca: found, created: false };
  }
  const ca = await createCa();
  await writePair(dir, CERT_DIR_FILES.caCert, CERT_DIR_FILES.caKey, ca);
  return { ca, created: true };
}

export interface CertDirResult {
  readonly ca: KeyPair;
  /** Set when asked for a serving certificate. */
  readonly serving?: KeyPair;
  readonly createdCa: boolean;
  readonly issuedServing: boolean;
}

/**
 * The CA in `dir` (made when missing) and, when `servingSans` is given, a serving certificate signed by
 * it that covers them (reused when it still does, reissued otherwise).
 */
export async function prepareCertDir(dir: string, servingSans?: readonly string[]): Promise<CertDirResult> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return withLock(dir, async () => {
    const { ca, created } = await caIn(dir);
    if (servingSans === undefined) return { ca, createdCa: created, issuedServing: false };
    const found = await loadPair(dir, CERT_DIR_FILES.servingCert, CERT_DIR_FILES.servingKey);
    if (typeof found === 'object' && isIssuedBy(found, ca, RENEW_MARGIN_MS) && coversSans(found.certPem, servingSans)) {
      return { ca, serving: found, createdCa: created, issuedServing: false };
    }
    const serving = await issueServingCert(ca, servingSans);
    await writePair(dir, CERT_DIR_FILES.servingCert, CERT_DIR_FILES.servingKey, serving);
    return { ca, serving, createdCa: created, issuedServing: true };
  });
}
