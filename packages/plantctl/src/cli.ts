#!/usr/bin/env node
/** The `plantctl` executable. */
import { run } from './program.js';

process.exitCode = await run(process.argv);
