/** Installed package versions, read from node_modules so reports name what actually ran. */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export function installedVersion(pkg: string): string {
  const file = path.join(REPO_ROOT, 'node_modules', pkg, 'package.json');
  try {
    const json = JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: unknown };
    return typeof json.version === 'string' ? json.version : 'unknown';
  } catch {
    return 'not installed';
  }
}

/** The version of this repository's own package (REMIT). */
export function repositoryVersion(): string {
  try {
    const json = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version?: unknown };
    return typeof json.version === 'string' ? json.version : 'unknown';
  } catch {
    return 'unknown';
  }
}
