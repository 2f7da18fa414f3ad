/**
 * The file system isomorphic-git reads one repository's objects through, for the reads between two of
 * its fetches (a RepositoryReadCache's lifetime: the caller holds the repository's read lock, and a
 * fetch drops the cache before it writes). An object not yet inflated costs the library three file
 * system calls besides the pack read itself: a `stat` of the gitdir (to tell a `.git` file from a
 * directory), an `open` of the loose object that fails, and a listing of the packs. At a fleet's first
 * reconcile every object is such a miss, and the three were about 6% of the controller's main thread in
 * a burst of 1,000 ApplySets (docs/performance.md), the calls themselves run on libuv's threads besides.
 *
 * Here each is asked once per cache: the gitdir's stat and the packs' listing are kept, and a loose
 * object is refused without a call when the objects directory has no loose objects at all (a cache
 * filled by fetches holds packs only). A failed call is not kept: the next read asks again.
 */
import { promises, type PathLike } from 'node:fs';
import path from 'node:path';
import { gitFs } from './git-fs.js';

/** A loose object's place below `objects/`: two hex digits, a slash, the other 38. */
const LOOSE_OBJECT = /^[0-9a-f]{2}\/[0-9a-f]{38}$/;
const LOOSE_DIRECTORY = /^[0-9a-f]{2}$/;

/** What a read of an absent loose object gets: isomorphic-git reads any failure as "not loose". */
const NOT_LOOSE = Object.assign(new Error('no loose objects in this repository'), { code: 'ENOENT' });

export type PackReadFs = typeof gitFs;

export function createPackReadFs(gitdir: string): PackReadFs {
  const objectsDir = path.join(gitdir, 'objects');
  const packDir = path.join(objectsDir, 'pack');
  const kept = <T>(ask: () => Promise<T>) => {
    let answer: Promise<T> | undefined;
    return () => {
      if (answer !== undefined) return answer;
      const asked = ask();
      answer = asked;
      asked.catch(() => {
        if (answer === asked) answer = undefined;
      });
      return asked;
    };
  };
  const gitdirStat = kept(() => promises.stat(gitdir));
  const packNames = kept(() => promises.readdir(packDir));
  const hasLoose = kept(() =>
    promises.readdir(objectsDir).then(
      (names) => names.some((name) => LOOSE_DIRECTORY.test(name)),
      () => true,
    ),
  );
  const isLoosePath = (file: PathLike) =>
    typeof file === 'string' &&
    file.startsWith(`${objectsDir}/`) &&
    LOOSE_OBJECT.test(file.slice(objectsDir.length + 1));

  return {
    ...gitFs,
    readFile: ((file?: PathLike, options?: Parameters<typeof promises.readFile>[1]) =>
      file !== undefined && isLoosePath(file)
        ? hasLoose().then((loose) => (loose ? gitFs.readFile(file, options) : Promise.reject(NOT_LOOSE)))
        : gitFs.readFile(file, options)) as typeof gitFs.readFile,
    stat: ((file: PathLike, options?: object) =>
      file === gitdir && options === undefined
        ? gitdirStat()
        : promises.stat(file, options as never)) as typeof promises.stat,
    // A copy each time: the library sorts the list it is given in place.
    readdir: ((dir: PathLike, options?: object) =>
      dir === packDir && options === undefined
        ? packNames().then((names) => [...names])
        : promises.readdir(dir, options as never)) as typeof promises.readdir,
  };
}
