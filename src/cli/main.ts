#!/usr/bin/env -S node --max-semi-space-size=64 --min-semi-space-size=64 --interrupt-budget=8192
// The `setpoint` command's entry point (the subcommands: program.ts).
import { exitWithParent } from '../controlplane/supervised.js';
import { buildProgram } from './program.js';

exitWithParent();
await buildProgram().parseAsync();
