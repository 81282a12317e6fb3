#!/usr/bin/env -S node --max-semi-space-size=64 --min-semi-space-size=64
// The `setpoint` command's entry point (the subcommands: program.ts).
import { buildProgram } from './program.js';

await buildProgram().parseAsync();
