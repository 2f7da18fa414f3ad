/**
 * The message of anything thrown, for a line a user reads. Read as a property, not through
 * `instanceof Error`: errors made in another realm (a test's VM context) are no instance of this one's.
 */
export function messageOf(error: unknown): string {
  return typeof error === 'object' && error !== null && typeof (error as Error).message === 'string'
    ? (error as Error).message
    : String(error);
}
