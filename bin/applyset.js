#!/usr/bin/env node
// The `applyset` executable: runs the compiled CLI (built by `npm install` through the prepare script).
import { exitOnClosedPipe, main } from '../dist/main.js';

exitOnClosedPipe([process.stdout, process.stderr]);

process.exitCode = await main(process.argv.slice(2));
