// Waiting on a condition with a deadline, the e2e tests' only way to wait (never a fixed sleep).

/** Polls `probe` until it returns something other than undefined, or fails with `what` at the deadline. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last === undefined ? '' : `: ${String(last)}`}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
