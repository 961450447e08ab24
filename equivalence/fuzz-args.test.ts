/** The fuzzer's command line (./fuzz.ts): every bad option refused, and the replay line complete. */

import { describe, expect, it } from 'vitest';
import { CANARIES, UsageError, parseFuzzArgs, replayCommand, withReplay } from './fuzz.js';
import { defaultSeed, scaledRuns, scaleFromEnv, seedFromEnv } from './property.js';

const defaults = { seed: () => 4242, workers: () => 2 };
const parse = (line: string) => parseFuzzArgs(line.split(' ').filter(Boolean), defaults);
const options = (line: string) => {
  const o = parse(line);
  if (o === 'help') throw new Error('unexpected help');
  return o;
};

describe('fuzz command line', () => {
  it('defaults', () => {
    const o = options('');
    expect(o.runs).toBe(10_000);
    expect(o.workers).toBe(2);
    expect(o.history).toBeNull();
    expect(o.campaign.seed).toBe(4242);
    expect(o.campaign.maxSteps).toBe(28);
    expect(o.against).toBe('wasm');
    expect(o.canary).toBeNull();
    expect(parse('--help')).toBe('help');
  });

  it('reads every option', () => {
    const o = options('--runs 20 --seed -77 --max-steps 5 --cuts all --full-every 0 --workers 0 --history 0 --against reference --binding jco --oracle');
    expect(o).toMatchObject({ runs: 20, workers: 0, history: 0, against: 'reference', binding: 'jco' });
    expect(o.campaign).toMatchObject({ seed: -77, maxSteps: 5, fullCheckEvery: 0, oracle: true });
    expect(o.campaign.check.cuts).toBe('all');
    expect(options('--runs=7').runs).toBe(7);
    expect(options('--seed 2147483647').campaign.seed).toBe(2147483647);
    expect(options('--seed -2147483648').campaign.seed).toBe(-2147483648);
    expect(options(`--canary ${CANARIES[0]}`).canary).toBe(CANARIES[0]);
  });

  it.each([
    ['--run 50', /--run\b/],
    ['--runs', /--runs/],
    ['--runs 0', /--runs.*"0"/],
    ['--runs -5', /--runs.*"-5"/],
    ['--runs 2.5', /--runs.*"2.5"/],
    ['--runs 5x', /--runs.*"5x"/],
    ['--workers -1', /--workers.*"-1"/],
    ['--max-steps -3', /--max-steps.*"-3"/],
    ['--max-steps 0', /--max-steps.*"0"/],
    ['--history -1', /--history.*"-1"/],
    ['--full-every -1', /--full-every.*"-1"/],
    ['--seed 1e20', /--seed.*"1e20"/],
    ['--seed 9007199254740993', /--seed/],
    // Seeds are mixed as 32-bit integers: 2^32 + 5 would run the campaign of 5.
    ['--seed 4294967301', /--seed wants an integer from -2147483648 to 2147483647, got "4294967301"/],
    ['--seed 2147483648', /--seed.*"2147483648"/],
    ['--seed -2147483649', /--seed.*"-2147483649"/],
    ['--seed abc', /--seed.*"abc"/],
    ['--canary bogus', /--canary.*"bogus"/],
    ['--canary', /--canary/],
    ['--cuts some', /--cuts.*"some"/],
    ['--against jco', /--against.*"jco"/],
    ['--binding wit', /--binding.*"wit"/],
    ['--canary accept-second-claim --against wasm', /--against/],
    ['stray', /stray/],
  ])('refuses %s', (line, message) => {
    let error: unknown;
    try {
      parse(line);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });

  it.each([[['--seed', ' 5']], [['--runs', '50 ']], [['--workers', '']], [['--history', '\t3', '--seed', '1']]])('refuses a number with blanks or none: %j', (argv) => {
    expect(() => parseFuzzArgs(argv, defaults)).toThrow(UsageError);
    expect(() => parseFuzzArgs(argv, defaults)).toThrow(/wants .*, got "/);
  });

  it.each([
    '--runs 2000 --canary accept-second-claim --seed 77',
    '--runs 50 --seed -3 --max-steps 9 --cuts none --full-every 1 --against reference --oracle --workers 0',
    '--seed 5 --binding jco --canary link-unchecked',
    '--seed 0',
  ])('replay line of %s parses back to the same campaign', (line) => {
    const o = options(line);
    const replay = replayCommand(o, 130);
    expect(replay.startsWith('npm run fuzz -- ')).toBe(true);
    const back = options(replay.slice('npm run fuzz -- '.length));
    expect(back.history).toBe(130);
    expect(back.campaign).toEqual(o.campaign);
    expect({ against: back.against, binding: back.binding, canary: back.canary }).toEqual({ against: o.against, binding: o.binding, canary: o.canary });
  });

  it('a canary campaign replays with its canary', () => {
    const o = options('--runs 2000 --canary accept-second-claim --seed 77');
    const message = 'DIVERGENCE in history 130 of campaign seed 77 (x)\nreplay: npm run fuzz -- --seed 77 --history 130 --max-steps 28\nmore';
    expect(withReplay(message, o, 130)).toBe(
      'DIVERGENCE in history 130 of campaign seed 77 (x)\nreplay: npm run fuzz -- --seed 77 --history 130 --max-steps 28 --canary accept-second-claim\nmore',
    );
  });
});

describe('REMIT_EQ_SEED', () => {
  it('is read as the seed when it is a 32-bit signed integer, and refused by name otherwise', () => {
    expect(defaultSeed({ REMIT_EQ_SEED: '1234' })).toBe(1234);
    expect(defaultSeed({ REMIT_EQ_SEED: '-2147483648' })).toBe(-2147483648);
    expect(Number.isSafeInteger(defaultSeed({}))).toBe(true);
    expect(seedFromEnv({})).toBeUndefined();
    for (const bad of ['abc', '', '1e3', '2147483648', '12.5', '0x10']) {
      expect(() => defaultSeed({ REMIT_EQ_SEED: bad })).toThrow(`REMIT_EQ_SEED wants an integer from -2147483648 to 2147483647, got ${JSON.stringify(bad)}`);
    }
  });
});

describe('REMIT_EQ_SCALE', () => {
  it('is read as a positive multiplier of the run counts, and refused by name otherwise (NaN or 0 ran no case, and passed)', () => {
    expect(scaleFromEnv({})).toBe(1);
    expect(scaleFromEnv({ REMIT_EQ_SCALE: '10' })).toBe(10);
    expect(scaleFromEnv({ REMIT_EQ_SCALE: '0.5' })).toBe(0.5);
    expect(scaleFromEnv({ REMIT_EQ_SCALE: '1e2' })).toBe(100);
    for (const bad of ['abc', '', '0', '-2', 'Infinity', '1e999', '0x10', '10x', 'NaN']) {
      expect(() => scaleFromEnv({ REMIT_EQ_SCALE: bad }), bad).toThrow(`REMIT_EQ_SCALE wants a positive number (the multiplier of the run counts, e.g. 10), got ${JSON.stringify(bad)}`);
    }
    expect(scaledRuns(400, 0.001)).toBe(1);
    expect(scaledRuns(400, 2.5)).toBe(1000);
  });
});
