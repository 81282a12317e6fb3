// Temp directories for tests on real disks: made under os.tmpdir(), removed after each test by whoever
// registered the cleanup, also when the test failed.
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export class TempDirs {
  private readonly made: string[] = [];

  async make(prefix = 'setpoint-storage-'): Promise<string> {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
    this.made.push(dir);
    return dir;
  }

  async removeAll(): Promise<void> {
    for (const dir of this.made.splice(0)) await fs.rm(dir, { recursive: true, force: true });
  }
}
