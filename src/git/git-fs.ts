import { promises, type PathLike } from 'node:fs';

/**
 * The file system every isomorphic-git call is given: Node's promise API, as one object. The library
 * wraps the `fs` of each call anew and, to tell a promise API from a callback one, calls `readFile()`
 * with no path, twice per call; Node's own `readFile` answers that with an ERR_INVALID_ARG_TYPE error
 * and its stack trace. A fleet reading one repository makes thousands of such calls a second (every
 * tree and blob it reads), and building those errors was a visible share of the controller's CPU in a
 * burst. Here the probe is answered with a resolved promise, which is all the library looks at.
 */
export const gitFs = {
  readFile: (path?: PathLike, options?: Parameters<typeof promises.readFile>[1]) =>
    path === undefined ? Promise.resolve(undefined) : promises.readFile(path, options),
  writeFile: promises.writeFile,
  mkdir: promises.mkdir,
  rmdir: promises.rmdir,
  rm: promises.rm,
  unlink: promises.unlink,
  stat: promises.stat,
  lstat: promises.lstat,
  readdir: promises.readdir,
  readlink: promises.readlink,
  symlink: promises.symlink,
};
