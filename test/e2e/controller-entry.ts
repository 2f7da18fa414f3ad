// The `applyset` command as its own process (the e2e tests run the controller through it), from the
// TypeScript sources through tsx so tests never depend on a stale dist/ build.
import { exitOnClosedPipe, main } from '../../src/main.js';

exitOnClosedPipe([process.stdout, process.stderr]);

process.exitCode = await main(process.argv.slice(2));
