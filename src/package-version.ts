import { createRequire } from 'node:module';

/** The version in package.json: what `applyset version` prints, the spans' and the User-Agent's version. */
export function packageVersion(): string {
  // `../package.json` from src/ and from dist/ alike.
  return (createRequire(import.meta.url)('../package.json') as { version: string }).version;
}
