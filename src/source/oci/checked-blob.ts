/** A layer streamed from the registry, its length and digest checked as the last chunk passes. */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ArtifactInvalidError } from './registry-error.js';

/** The layer's bytes as they come, checked to be `size` bytes of `digest` when they end. */
export async function* checkedBlob(
  response: IncomingMessage,
  expected: { digest: string; size: number; where: string },
): AsyncIterable<Uint8Array> {
  const hash = createHash('sha256');
  let length = 0;
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      length += chunk.length;
      if (length > expected.size) {
        throw new ArtifactInvalidError(
          `${expected.where}: layer ${expected.digest} is longer than its ${expected.size} bytes`,
        );
      }
      hash.update(chunk);
      yield chunk;
    }
  } finally {
    response.destroy();
  }
  const digest = `sha256:${hash.digest('hex')}`;
  if (length !== expected.size || digest !== expected.digest) {
    throw new ArtifactInvalidError(
      `${expected.where}: layer ${expected.digest} came as ${length} bytes of ${digest}; nothing of it was used`,
    );
  }
}
