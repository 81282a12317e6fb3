// The seed of a run that randomness decides: taken from an environment variable when one is given (to
// repeat a run), drawn at random otherwise, and always said, with the line that repeats it.
import { randomInt } from 'node:crypto';

export interface Seed {
  readonly value: number;
  /** "seed=123 (STORAGE_CRASH_SEED=123 to repeat)". */
  readonly line: string;
}

export function seedFrom(envVar: string, env: NodeJS.ProcessEnv = process.env): Seed {
  const given = env[envVar];
  let value: number;
  if (given !== undefined && given !== '') {
    value = Number(given);
    if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${envVar}=${given} is not a seed (a non-negative integer)`);
  } else value = randomInt(2 ** 31);
  return { value, line: `seed=${value} (${envVar}=${value} to repeat)` };
}
