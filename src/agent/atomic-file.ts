// Small state files written so a crash never leaves half of one: write a temporary file, fsync it, and
// rename it over the old one (rename is atomic on one filesystem).
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';

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
