/** Whether `error` carries this `code`, as Node's fs errors (`ENOENT`) and isomorphic-git's do. */
export function hasErrorCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}
