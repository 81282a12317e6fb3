// Linearizable reads, checked per key (a history is linearizable exactly when each key's is). Every
// value is unique and knows the log index that wrote it, so a read is stale exactly when it returns a
// value written earlier in the log than something the read must see: a write acknowledged before the
// read began, or a value another read returned before this one began.

export interface ReadFloor {
  /** Log index of the newest write to the key that a read starting now must observe. */
  readonly index: number;
  /** What set it, for the report. */
  readonly why: string;
}

export class ReadChecker {
  checked = 0;
  private readonly floors = new Map<string, ReadFloor>();

  /** Taken when a read starts: everything completed so far is what it must see. */
  floor(key: string): ReadFloor | undefined {
    return this.floors.get(key);
  }

  writeAcked(key: string, index: number, why: string): void {
    this.raise(key, index, why);
  }

  /**
   * A read finished and observed the value written at `observedIndex` (0: the key was never written).
   * Returns a description of the violation, or undefined when the read is fine.
   */
  readDone(key: string, observedIndex: number, floorAtStart: ReadFloor | undefined, why: string): string | undefined {
    this.checked++;
    if (floorAtStart !== undefined && observedIndex < floorAtStart.index) {
      return `observed the write at index ${observedIndex}, but before the read began ${floorAtStart.why} (index ${floorAtStart.index})`;
    }
    this.raise(key, observedIndex, why);
    return undefined;
  }

  private raise(key: string, index: number, why: string): void {
    const f = this.floors.get(key);
    if (f === undefined || index > f.index) this.floors.set(key, { index, why });
  }
}
