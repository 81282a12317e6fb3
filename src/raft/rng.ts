// Injected randomness. The core never calls Math.random: a seeded Rng makes every run reproducible.

export interface Rng {
  /** A uniformly distributed integer in [0, n). */
  int(n: number): number;
  /** A uniformly distributed float in [0, 1). */
  float(): number;
}

/** sfc32, seeded through splitmix32: small, fast, and good enough for fault schedules and timeouts. */
export class SeededRng implements Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 12; i++) this.u32();
  }

  u32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) >>> 0;
    return t >>> 0;
  }

  float(): number {
    return this.u32() / 4294967296;
  }

  int(n: number): number {
    return Math.floor(this.float() * n);
  }

  /** Derives an independent stream, e.g. one per simulated node. */
  fork(): SeededRng {
    return new SeededRng(this.u32());
  }
}
