/**
 * The machine's flush limit for durable commits: a loop of one write and one fdatasync on a file
 * in the bench's scratch folder (the same file system as the databases). Each write puts one
 * 4 KiB block, the size of a SQLite page, at the next slot of a file preallocated (and flushed)
 * beforehand, wrapping around: a WAL commit of one small record writes about one page frame into a
 * WAL file that SQLite reuses from its start after each checkpoint, so it mostly overwrites blocks
 * the file already has and its flush need not make a new file length durable. This is the
 * cheapest durable write the file system offers; a durable commit can do no better than one.
 */

import fs from 'node:fs';

export const FDATASYNC_BLOCK_BYTES = 4096;
/** Blocks of the preallocated file (4 MiB, SQLite's default WAL size before a checkpoint). */
const FLUSH_FILE_BLOCKS = 1024;

export interface FlushFile {
  fd: number;
  next: number;
}

/** Create and preallocate the file (written and flushed, not timed); close it with `fs.closeSync(f.fd)`. */
export function openFlushFile(file: string): FlushFile {
  fs.rmSync(file, { force: true });
  const fd = fs.openSync(file, 'w+');
  fs.writeSync(fd, new Uint8Array(FDATASYNC_BLOCK_BYTES * FLUSH_FILE_BLOCKS));
  fs.fsyncSync(fd);
  return { fd, next: 0 };
}

/** `writes` block writes in place, each followed by fdatasync. Returns the bytes written. */
export function fdatasyncLoop(f: FlushFile, writes: number, block: Uint8Array): number {
  for (let i = 0; i < writes; i++) {
    fs.writeSync(f.fd, block, 0, block.length, f.next * FDATASYNC_BLOCK_BYTES);
    fs.fdatasyncSync(f.fd);
    f.next = (f.next + 1) % FLUSH_FILE_BLOCKS;
  }
  return writes * block.length;
}
