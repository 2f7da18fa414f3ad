#!/usr/bin/env node
// The `applyset` executable: runs the compiled CLI (built by `npm install` through the prepare script).
import { main } from '../dist/main.js';

process.exitCode = await main(process.argv.slice(2));
