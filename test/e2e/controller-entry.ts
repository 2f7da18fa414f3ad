// The controller as its own process, run from the TypeScript sources through tsx so the end-to-end
// tests never depend on a stale dist/ build.
import { main } from '../../src/main.js';

process.exitCode = await main(process.argv.slice(2));
