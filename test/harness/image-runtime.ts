/**
 * How the controller's image runs node, read from the Dockerfile itself: the flags its ENTRYPOINT gives
 * node before `bin/applyset.js`, and the allocator its ENV preloads. The controller bench runs `dist/`
 * with exactly these, and the chart's test checks that its command carries the same flags, so the
 * figures quoted in docs/performance.md are those of the image and the three cannot drift apart.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dockerfile = () => readFileSync(fileURLToPath(new URL('../../Dockerfile', import.meta.url)), 'utf8');

/** The node flags of the image's ENTRYPOINT, e.g. `['--max-semi-space-size=8']`. */
export function imageNodeFlags(): string[] {
  const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile())?.[1];
  if (entrypoint === undefined) throw new Error('Dockerfile: no ENTRYPOINT in exec form');
  const argv = JSON.parse(entrypoint) as string[];
  const script = argv.indexOf('bin/applyset.js');
  if (argv[0] !== 'node' || script < 0) throw new Error(`Dockerfile: unexpected ENTRYPOINT ${entrypoint}`);
  return argv.slice(1, script);
}

/**
 * The image's allocator: the Dockerfile's LD_PRELOAD (jemalloc, at a path the image links it to), which
 * the controller's process inherits. The host must hold the same library at the same path
 * (scripts/install-jemalloc.sh puts it there); without it the figures and the e2e runs would be glibc's,
 * not the image's, so that is an error here rather than ld.so's warning in the controller's log.
 */
export function imageEnv(): Record<string, string> {
  const preload = /^ENV LD_PRELOAD=(\S+)$/m.exec(dockerfile())?.[1];
  if (preload === undefined) throw new Error('Dockerfile: no ENV LD_PRELOAD');
  if (!existsSync(preload)) {
    throw new Error(
      `the image preloads ${preload}, which this machine lacks: run scripts/install-jemalloc.sh`,
    );
  }
  return { LD_PRELOAD: preload };
}
