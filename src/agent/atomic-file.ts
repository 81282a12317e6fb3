// Small state files written so a crash never leaves half of one: write a temporary file, fsync it, and
// rename it over the old one (rename is atomic on one filesystem).
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';

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

/**
 * The same off the event loop and without the fsync: a reader sees the old bytes or the new, also after
 * the writer was killed (the page cache keeps what write() gave it), but a power cut may lose the last
 * write. For state that only matters while the host stays up. One writer per path at a time.
 */
export async function replaceFile(path: string, data: string): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, data, { mode: 0o600 });
  await rename(tmp, path);
}
