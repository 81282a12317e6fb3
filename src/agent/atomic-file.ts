// Small state files written so a crash never leaves half of one: write a temporary file, fsync it, and
// rename it over the old one (rename is atomic on one filesystem).
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';

export function writeFileAtomic(path: string, data: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

/** The same off the event loop (the fsync waits in the thread pool, not in the loop): one writer per path at a time. */
export async function writeFileAtomicAsync(path: string, data: string): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  const fh = await open(tmp, 'w', 0o600);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
}
