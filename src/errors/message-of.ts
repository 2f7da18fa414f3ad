/** The message of anything thrown, for a line a user reads. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
