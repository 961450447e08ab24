/**
 * `npm run fuzz -- --history I` replays history I of one campaign, so it needs that campaign's
 * --seed (without it a random seed's history I ran, and --runs was silently ignored); the replay
 * line a divergence prints carries both and still parses; --runs and --workers with --history are
 * said to be ignored.
 */

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { UsageError, parseFuzzArgs, replayCommand } from './fuzz.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The options of a command line without --help, with a fixed default seed (4242). */
const parse = (line: string) => parseFuzzArgs(line.split(' '), { seed: () => 4242, workers: () => 2 });
const options = (line: string) => parse(line) as Exclude<ReturnType<typeof parse>, 'help'>;

describe('fuzz --history', () => {
  it.each(['--history 3', '--runs 20 --history 3', '--history 0 --max-steps 9 --oracle'])('refuses %s without --seed, on one line', (line) => {
    expect(() => parse(line)).toThrow(UsageError);
    expect(() => parse(line)).toThrow(/^--history needs the --seed of the campaign that printed the index/);
  });

  it('with its seed: replays that history; --runs and --workers are noted as ignored', () => {
    expect(options('--seed 5 --history 3')).toMatchObject({ history: 3, notes: [] });
    expect(options('--seed 5 --history 3').campaign.seed).toBe(5);
    expect(options('--seed 5 --history 3 --runs 20').notes).toEqual(['--runs ignored: --history replays one history, in this thread']);
    expect(options('--seed 5 --history 3 --runs 20 --workers 0').notes).toEqual(['--runs and --workers ignored: --history replays one history, in this thread']);
    expect(options('--runs 20 --workers 0').notes).toEqual([]);
  });

  it('the replay line of a campaign with a random seed names the seed, and parses back', () => {
    const campaign = options('--runs 20');
    const replay = replayCommand(campaign, 7);
    expect(replay).toBe('npm run fuzz -- --seed 4242 --history 7 --max-steps 28');
    expect(options(replay.slice('npm run fuzz -- '.length))).toMatchObject({ history: 7, campaign: { seed: 4242 } });
  });

  it('npm run fuzz -- --runs 20 --history 3: refused before any work, one line, exit 2', () => {
    const r = spawnSync('bash', [path.join(repoRoot, 'scripts', 'tsx.sh'), path.join(repoRoot, 'equivalence', 'fuzz.ts'), '--runs', '20', '--history', '3'], {
      encoding: 'utf8', timeout: 60_000,
    });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^fuzz: --history needs the --seed of the campaign that printed the index/)]);
  });

  it('the documented canary campaign fails, names the canary core, and its replay line reproduces the divergence', () => {
    const fuzz = (args: string[]) => spawnSync('bash', [path.join(repoRoot, 'scripts', 'tsx.sh'), path.join(repoRoot, 'equivalence', 'fuzz.ts'), ...args], {
      encoding: 'utf8', timeout: 120_000,
    });
    const campaign = fuzz(['--runs', '2000', '--canary', 'accept-second-claim', '--seed', '7', '--workers', '0']);
    expect(campaign.status).toBe(1);
    const divergence = /^DIVERGENCE in history (\d+) of campaign seed 7 .*$/m.exec(campaign.stderr);
    expect(divergence).not.toBeNull();
    const replay = /^replay: npm run fuzz -- (.*)$/m.exec(campaign.stderr)![1]!;
    expect(replay).toBe(`--seed 7 --history ${divergence![1]} --max-steps 28 --canary accept-second-claim`);
    // The two answers are told apart: the canary's and the clean reference's.
    expect(campaign.stderr).toMatch(/^reference with canary accept-second-claim: [0-9a-f]+$/m);
    expect(campaign.stderr).toMatch(/^reference: [0-9a-f]+$/m);
    const again = fuzz(replay.split(' '));
    expect(again.status).toBe(1);
    expect(again.stderr).toContain(divergence![0]);
    expect(again.stderr).toContain(`replay: npm run fuzz -- ${replay}`);
  }, 240_000);
});
