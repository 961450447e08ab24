/**
 * The regression corpus: logs that once exposed a divergence (or pin down a subtle rule), replayed
 * on both cores by corpus.test.ts. Each entry is `NAME.hex` (the log, hex) and `NAME.json` (a short
 * note: where it came from, the seed and path that found it, what diverged).
 */

import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { hex, type Divergence } from './compare.js';

export const CORPUS_DIR = fileURLToPath(new URL('./corpus/', import.meta.url));

export interface CorpusNote {
  note: string;
  source: string;
  seed?: number;
  path?: string;
  /** What the two cores answered when the entry was found (hex, or "threw: ..."). */
  divergence?: { operation: string; request: string | null; outputs: Record<string, string> };
  found: string;
}

export interface CorpusEntry {
  name: string;
  log: Uint8Array;
  note: CorpusNote;
}

export function readCorpus(dir = CORPUS_DIR): CorpusEntry[] {
  let files: string[];
  try {
    files = readdirSync(dir);
  } catch {
    return [];
  }
  return files
    .filter((f) => f.endsWith('.hex'))
    .sort()
    .map((f) => {
      const name = f.slice(0, -'.hex'.length);
      const log = Uint8Array.from(Buffer.from(readFileSync(`${dir}${f}`, 'utf8').trim(), 'hex'));
      let note: CorpusNote = { note: '(no note)', source: 'unknown', found: '' };
      try {
        note = JSON.parse(readFileSync(`${dir}${name}.json`, 'utf8')) as CorpusNote;
      } catch {
        // an entry without a note still replays
      }
      return { name, log, note };
    });
}

/** Write a log to the corpus under a content-derived name; returns the name. */
export function writeCorpusEntry(
  log: Uint8Array,
  note: Omit<CorpusNote, 'found'>,
  options: { dir?: string; prefix?: string } = {},
): string {
  const dir = options.dir ?? CORPUS_DIR;
  mkdirSync(dir, { recursive: true });
  const digest = createHash('sha256').update(log).digest('hex').slice(0, 12);
  const name = `${options.prefix ?? 'found'}-${digest}`;
  writeFileSync(`${dir}${name}.hex`, `${hex(log)}\n`);
  // Written again with the same note (seed-corpus.ts rewrites every edge entry): keep the date it was first written.
  let found = new Date().toISOString();
  try {
    const { found: before, ...rest } = JSON.parse(readFileSync(`${dir}${name}.json`, 'utf8')) as CorpusNote;
    if (JSON.stringify(rest) === JSON.stringify(note) && typeof before === 'string') found = before;
  } catch {
    // a new entry
  }
  writeFileSync(`${dir}${name}.json`, `${JSON.stringify({ ...note, found }, null, 2)}\n`);
  return name;
}

export function divergenceNote(d: Divergence): CorpusNote['divergence'] {
  return {
    operation: d.operation,
    request: d.request ? hex(d.request) : null,
    outputs: { [d.coreNames[0]]: d.outputs[0], [`${d.coreNames[1]}${d.coreNames[1] === d.coreNames[0] ? ' (b)' : ''}`]: d.outputs[1] },
  };
}
