/**
 * The bench's scratch and code folders are named for their run's process id, so that a folder a
 * killed run left behind can be told from one a concurrent run is still using.
 */

import fs from 'node:fs';
import path from 'node:path';

/** The name of a run's folder: `prefix`, the process id of the run that made it, a dash, mkdtemp's six characters. */
export function runFolderPrefix(prefix: string, pid = process.pid): string {
  return `${prefix}${pid}-`;
}

/**
 * Remove the folders in `parent` named `prefix`, a process id and mkdtemp's suffix whose run has
 * ended without removing them (a kill, or a Ctrl-C that reached the process while it was busy):
 * their process no longer exists. A folder of a run still going (a concurrent bench) is left
 * alone, and so is every other name (in a user's --out only `.bench-scratch-` is ever given).
 */
export function removeLeftBehind(parent: string, prefix: string): void {
  const ours = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\d+)-[A-Za-z0-9]{6}$`);
  for (const name of fs.readdirSync(parent)) {
    const pid = Number(ours.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid === process.pid || processExists(pid)) continue;
    fs.rmSync(path.join(parent, name), { recursive: true, force: true });
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
