/**
 * The machine's flush limit for durable commits: a loop of one write and one fdatasync on a file
 * in the bench's scratch folder (the same file system as the databases). Each write appends one
 * 4 KiB block, the size of a SQLite page, as a WAL commit of one small record appends about one
 * page frame; so each fdatasync also has to make the file's new length durable, as a WAL append
 * does. A durable commit can do no better than one of these.
 */

import fs from 'node:fs';

export const FDATASYNC_BLOCK_BYTES = 4096;

/** An open file for `fdatasyncLoop`; close it with `fs.closeSync(fd)`. */
export function openFlushFile(file: string): number {
  fs.rmSync(file, { force: true });
  return fs.openSync(file, 'w');
}

/** `writes` appends of one block, each followed by fdatasync. Returns the bytes written. */
export function fdatasyncLoop(fd: number, writes: number, block: Uint8Array): number {
  for (let i = 0; i < writes; i++) {
    fs.writeSync(fd, block);
    fs.fdatasyncSync(fd);
  }
  return writes * block.length;
}
