import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { removeLeftBehind, runFolderPrefix } from './scratch.js';

describe('the folders a bench run left behind', () => {
  it('are removed when their process is gone; a live run\'s, this one\'s and every other name are kept', () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'remit-scratch-'));
    onTestFinished(() => fs.rmSync(parent, { recursive: true, force: true }));
    // A process id no process has (above the kernel's pid_max of 2^22).
    const dead = 2 ** 22 + 17;
    const names = {
      dead: `${runFolderPrefix('.bench-scratch-', dead)}AbC123`,
      live: `${runFolderPrefix('.bench-scratch-', 1)}AbC123`, // init
      own: `${runFolderPrefix('.bench-scratch-')}AbC123`,
      otherKind: `${runFolderPrefix('code-', dead)}AbC123`,
      userFolder: `.bench-scratch-${dead}-results-2026`,
      unrelated: 'run-2024-12',
    };
    for (const name of Object.values(names)) fs.mkdirSync(path.join(parent, name));
    fs.writeFileSync(path.join(parent, names.dead, 'scratch.db'), 'x');
    removeLeftBehind(parent, '.bench-scratch-');
    expect(fs.readdirSync(parent).sort()).toEqual([names.live, names.own, names.otherKind, names.userFolder, names.unrelated].sort());
  });
});
