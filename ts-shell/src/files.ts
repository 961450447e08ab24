/**
 * Creating the folders a file store lives in. Node's `mkdirSync(path, { recursive: true })` can
 * loop forever: when mkdir of a folder fails with ENOENT although its parent exists (a path under
 * /proc, some FUSE and network file systems), it retries the parent and the child without end. So
 * folders are made here one level at a time, from the deepest one that exists, and any failure is
 * reported at once with the folder that could not be made.
 */

import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Thrown by ensureDirectory; `code` is the system's (ENOENT, EACCES, ENOTDIR, ...). */
export class DirectoryError extends Error {
  override readonly name = 'DirectoryError';
  constructor(readonly path: string, readonly code: string, problem: string) {
    super(`cannot create the folder ${path}: ${problem}`);
  }
}

/** Make folder `path` and any missing parents, or throw DirectoryError naming the first that fails. */
export function ensureDirectory(path: string): void {
  const missing: string[] = [];
  let current = resolve(path);
  for (;;) {
    const kind = entryKind(current);
    if (kind === 'directory') break;
    if (kind === 'other') throw new DirectoryError(current, 'ENOTDIR', 'it exists and is not a folder');
    missing.push(current);
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const folder of missing.reverse()) {
    try {
      mkdirSync(folder);
    } catch (error) {
      const code = String((error as { code?: unknown }).code ?? 'EIO');
      // Another process may have made it meanwhile; that is what we wanted.
      if (code === 'EEXIST' && entryKind(folder) === 'directory') continue;
      throw new DirectoryError(folder, code, (error as Error).message);
    }
  }
}

function entryKind(path: string): 'directory' | 'other' | 'missing' {
  try {
    return statSync(path).isDirectory() ? 'directory' : 'other';
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ENOENT') return 'missing';
    // ENOTDIR (a file on the way), EACCES: let mkdir report it with the folder's name.
    return 'missing';
  }
}
