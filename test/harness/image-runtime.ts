/**
 * How the controller's image runs node, read from the Dockerfile itself: the flags its ENTRYPOINT gives
 * node before `bin/applyset.js`, and the malloc setting of its ENV. The controller bench runs `dist/`
 * with exactly these, and the chart's test checks that its command carries the same flags, so the
 * figures quoted in docs/performance.md are those of the image and the three cannot drift apart.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dockerfile = () => readFileSync(fileURLToPath(new URL('../../Dockerfile', import.meta.url)), 'utf8');

/** The node flags of the image's ENTRYPOINT, e.g. `['--max-semi-space-size=4']`. */
export function imageNodeFlags(): string[] {
  const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile())?.[1];
  if (entrypoint === undefined) throw new Error('Dockerfile: no ENTRYPOINT in exec form');
  const argv = JSON.parse(entrypoint) as string[];
  const script = argv.indexOf('bin/applyset.js');
  if (argv[0] !== 'node' || script < 0) throw new Error(`Dockerfile: unexpected ENTRYPOINT ${entrypoint}`);
  return argv.slice(1, script);
}

/** The image's MALLOC_ARENA_MAX, which the controller's process inherits. */
export function imageEnv(): Record<string, string> {
  const arenas = /\bMALLOC_ARENA_MAX=(\d+)/.exec(dockerfile())?.[1];
  if (arenas === undefined) throw new Error('Dockerfile: no MALLOC_ARENA_MAX');
  return { MALLOC_ARENA_MAX: arenas };
}
