/**
 * Options REMIT cannot use are refused, typed, before anything is read or written (docs/guide.md,
 * "Running"; docs/errors.md, REMIT_OPTION_INVALID and REMIT_ARGUMENT_INVALID): every createRemit
 * option, the options argument of start / continueRun / fork, and the SQLite store's options. One
 * case per bad option; each checks the error's class, code and field, and that the store holds no
 * run (or no new record) afterwards. Also: default run ids of long names and ids are valid.
 */

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCore } from './core/index.js';
import { ArgumentInvalidError, OptionInvalidError, RemitError } from './errors.js';
import { createRemit, Remit, type ListedStatus, type RemitOptions } from './remit.js';
import { MemoryStore } from './store/memory.js';
import { openSqliteStore, type SqliteStoreOptions } from './store/sqlite.js';
import { END, workflow } from './workflow/workflow.js';

const dir = mkdtempSync(join(tmpdir(), 'remit-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const State = z.object({ n: z.number() });
const builder = () => workflow({ name: 'opts', version: '1', state: State })
  .effect('charge', { run: () => ({ ok: true }), next: 'ask' })
  .interrupt('ask', { resume: z.object({ ok: z.boolean() }), apply: () => ({}), next: END });
const wf = builder().build();

type ErrorClass = abstract new (...args: never[]) => RemitError;
type Case = [label: string, options: (store: MemoryStore) => Record<string, unknown>, error: ErrorClass, code: string, field: string, message?: RegExp];

const OPTION_INVALID = 'REMIT_OPTION_INVALID';
const CASES: Case[] = [
  ['maxGroupedPureSteps 0', (store) => ({ store, maxGroupedPureSteps: 0 }), OptionInvalidError, OPTION_INVALID, 'maxGroupedPureSteps'],
  ['maxGroupedPureSteps 1.5', (store) => ({ store, maxGroupedPureSteps: 1.5 }), OptionInvalidError, OPTION_INVALID, 'maxGroupedPureSteps'],
  ['maxGroupedPureSteps "4"', (store) => ({ store, maxGroupedPureSteps: '4' }), OptionInvalidError, OPTION_INVALID, 'maxGroupedPureSteps'],
  ['core {}', (store) => ({ store, core: {} }), OptionInvalidError, OPTION_INVALID, 'core', /lacks recover\(\)/],
  ['core without feed', (store) => ({ store, core: { recover() {}, admit() {} } }), OptionInvalidError, OPTION_INVALID, 'core', /feed\(\)/],
  ['core null', (store) => ({ store, core: null }), OptionInvalidError, OPTION_INVALID, 'core'],
  ['core 5', (store) => ({ store, core: 5 }), OptionInvalidError, OPTION_INVALID, 'core'],
  ['hooks 5', (store) => ({ store, hooks: 5 }), OptionInvalidError, OPTION_INVALID, 'hooks'],
  ['hooks without at', (store) => ({ store, hooks: {} }), OptionInvalidError, OPTION_INVALID, 'hooks'],
  ['hooks null', (store) => ({ store, hooks: null }), OptionInvalidError, OPTION_INVALID, 'hooks'],
  ['groupPureSteps "no"', (store) => ({ store, groupPureSteps: 'no' }), OptionInvalidError, OPTION_INVALID, 'groupPureSteps'],
  ['groupPureSteps 0', (store) => ({ store, groupPureSteps: 0 }), OptionInvalidError, OPTION_INVALID, 'groupPureSteps'],
  ['workflows [{}]', (store) => ({ store, workflows: [{}] }), OptionInvalidError, OPTION_INVALID, 'workflows', /entry 0 is not a built workflow/],
  ['workflows [wf, builder]', (store) => ({ store, workflows: [wf, builder()] }), OptionInvalidError, OPTION_INVALID, 'workflows', /entry 1 .*call \.build\(\)/],
  ['workflows [wf, null]', (store) => ({ store, workflows: [wf, null] }), OptionInvalidError, OPTION_INVALID, 'workflows', /entry 1/],
  ['workflows not an array', (store) => ({ store, workflows: wf }), OptionInvalidError, OPTION_INVALID, 'workflows'],
  ['instanceId empty', (store) => ({ store, instanceId: '' }), OptionInvalidError, OPTION_INVALID, 'instanceId'],
  ['instanceId with a lone surrogate', (store) => ({ store, instanceId: 'pod-\ud800' }), OptionInvalidError, OPTION_INVALID, 'instanceId'],
  ['instanceId with a C1 control', (store) => ({ store, instanceId: 'a\u0085b' }), OptionInvalidError, OPTION_INVALID, 'instanceId'],
  ['instanceId with a line separator', (store) => ({ store, instanceId: 'a\u2028b' }), OptionInvalidError, OPTION_INVALID, 'instanceId'],
  ['effectLeaseMs 0', (store) => ({ store, effectLeaseMs: 0 }), OptionInvalidError, OPTION_INVALID, 'effectLeaseMs'],
  ['effectLeaseMs "30s"', (store) => ({ store, effectLeaseMs: '30s' }), OptionInvalidError, OPTION_INVALID, 'effectLeaseMs'],
  ['an unknown option (a misspelling)', (store) => ({ store, groupPureStep: false }), OptionInvalidError, OPTION_INVALID, 'groupPureStep', /not an option/],
  ['store missing', () => ({ workflows: [wf] }), OptionInvalidError, OPTION_INVALID, 'store'],
  ['store {}', () => ({ store: {} }), OptionInvalidError, OPTION_INVALID, 'store', /lacks readLog\(\)/],
  ['store a Promise of a store (openPostgresStore without await)', (store) => ({ store: Promise.resolve(store) }), OptionInvalidError, OPTION_INVALID, 'store', /is a Promise, not a Store: await it/],
  ['store with a readRun that is not a function', (store) => ({ store: Object.assign(Object.create(store) as object, { readRun: 1 }) }), OptionInvalidError, OPTION_INVALID, 'store', /readRun\(\)/],
];

describe('createRemit refuses an option it cannot use, before loading a core or touching the store', () => {
  for (const [label, options, errorClass, code, field, message] of CASES) {
    it(label, async () => {
      const store = new MemoryStore();
      const error = await createRemit({ workflows: [wf], core: 'reference', ...options(store) } as unknown as RemitOptions).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(errorClass);
      expect(error).toMatchObject({ code, field });
      if (message) expect((error as Error).message).toMatch(message);
      expect(await store.listRuns()).toEqual([]);
    });
  }

  it('refuses options that are not an object (ArgumentInvalidError, argument options)', async () => {
    for (const options of [null, undefined, 'store', []]) {
      const error = await createRemit(options as unknown as RemitOptions).catch((e: unknown) => e);
      expect(error, String(options)).toBeInstanceOf(ArgumentInvalidError);
      expect(error).toMatchObject({ code: 'REMIT_ARGUMENT_INVALID', argument: 'options' });
    }
  });

  it('accepts every option it documents', async () => {
    const store = new MemoryStore();
    const remit = await createRemit({
      store, workflows: [wf], core: await createCore('reference'), hooks: { at() {} }, groupPureSteps: false, maxGroupedPureSteps: 8,
      instanceId: 'pod-7', effectLeaseMs: 1000,
    });
    expect(remit.workflowNames()).toEqual(['opts']);
    expect((await remit.start(wf, { n: 1 }, { runId: 'r' })).status).toBe('parked');
  });
});

describe('start, continueRun and fork refuse an options argument that is not an object, reading and writing nothing', () => {
  const open = async () => {
    const store = new MemoryStore();
    const remit = new Remit(store, await createCore('reference'), [wf]);
    await remit.start(wf, { n: 1 }, { runId: 'r' });
    return { store, remit, before: await store.readLog('r') };
  };
  const cases: Array<[string, (remit: Remit) => Promise<unknown>, string]> = [
    ['start(w, input, null)', (remit) => remit.start(wf, { n: 1 }, null as never), 'options'],
    ['start(w, input, "id")', (remit) => remit.start(wf, { n: 1 }, 'new-run' as never), 'options'],
    ['start({}, input)', (remit) => remit.start({} as typeof wf, { n: 1 }), 'workflow'],
    ['start(builder, input)', (remit) => remit.start(builder() as unknown as typeof wf, { n: 1 }), 'workflow'],
    ['continueRun(id, null)', (remit) => remit.continueRun('r', null as never), 'options'],
    ['continueRun(id, 5)', (remit) => remit.continueRun('r', 5 as never), 'options'],
    ['fork(id, 0, null)', (remit) => remit.fork('r', 0, null as never), 'options'],
    ['fork(id, 0, [])', (remit) => remit.fork('r', 0, [] as never), 'options'],
    ['recoverAll(null)', (remit) => remit.recoverAll(null as never), 'options'],
    // A Map has no own option keys: it was read as no options, its runId ignored (a random id used).
    ['start(w, input, new Map([["runId", "x"]]))', (remit) => remit.start(wf, { n: 1 }, new Map([['runId', 'x']]) as never), 'options'],
    ['continueRun(id, new Set())', (remit) => remit.continueRun('r', new Set() as never), 'options'],
  ];
  for (const [label, call, argument] of cases) {
    it(label, async () => {
      const { store, remit, before } = await open();
      const error = await call(remit).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ArgumentInvalidError);
      expect(error).toMatchObject({ code: 'REMIT_ARGUMENT_INVALID', argument });
      if (label.includes('Map') || label.includes('Set') || label.includes('[]')) expect((error as Error).message).toMatch(/got an? (Map|Set|array)\b/);
      expect((await store.listRuns()).map((r) => r.runId)).toEqual(['r']);
      expect(await store.readLog('r')).toEqual(before);
    });
  }
});

describe('openSqliteStore refuses a synchronous or busyTimeoutMs it cannot use, creating nothing', () => {
  const bad: Array<[string, SqliteStoreOptions, string]> = [
    ['synchronous OFF', { synchronous: 'OFF' as never }, 'synchronous'],
    ['synchronous normal (lower case)', { synchronous: 'normal' as never }, 'synchronous'],
    ['synchronous 1', { synchronous: 1 as never }, 'synchronous'],
    ['synchronous null', { synchronous: null as never }, 'synchronous'],
    ['busyTimeoutMs -1', { busyTimeoutMs: -1 }, 'busyTimeoutMs'],
    ['busyTimeoutMs 1.5', { busyTimeoutMs: 1.5 }, 'busyTimeoutMs'],
    ['busyTimeoutMs NaN', { busyTimeoutMs: Number.NaN }, 'busyTimeoutMs'],
    ['busyTimeoutMs "5000"', { busyTimeoutMs: '5000' as never }, 'busyTimeoutMs'],
    ['busyTimeoutMs 2^31', { busyTimeoutMs: 2 ** 31 }, 'busyTimeoutMs'],
  ];
  bad.forEach(([label, options, field], i) => {
    it(label, () => {
      const path = join(dir, `bad-${i}`, 'remit.db');
      let error: unknown;
      try {
        openSqliteStore(path, options);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(OptionInvalidError);
      expect(error).toMatchObject({ code: OPTION_INVALID, field });
      expect(existsSync(path)).toBe(false);
      expect(existsSync(join(dir, `bad-${i}`))).toBe(false);
    });
  });

  it.each([
    ['no path', () => openSqliteStore(undefined as never), 'path'],
    ['an empty path', () => openSqliteStore(''), 'path'],
    ['null options', () => openSqliteStore(join(dir, 'null-options.db'), null as never), 'options'],
  ])('%s: OptionInvalidError naming it, nothing created', (_label, open, field) => {
    expect(open).toThrow(expect.objectContaining({ code: OPTION_INVALID, field }));
    expect(existsSync(join(dir, 'null-options.db'))).toBe(false);
  });

  it('accepts FULL, NORMAL and a busy timeout of 0', async () => {
    for (const [i, options] of ([{ synchronous: 'FULL' }, { synchronous: 'NORMAL' }, { busyTimeoutMs: 0 }, {}] as SqliteStoreOptions[]).entries()) {
      const store = openSqliteStore(join(dir, `good-${i}.db`), options);
      expect(await store.listRuns()).toEqual([]);
      await store.close();
    }
  });
});

describe('default run ids of long names and ids are valid', () => {
  it('start without a run id works for a 200-byte workflow name, fork without one for a 200-byte run id', async () => {
    const core = await createCore('reference');
    for (const name of ['w'.repeat(180), 'w'.repeat(200), '/'.repeat(200), '注'.repeat(66)]) {
      const long = workflow({ name, version: '1', state: State })
        .effect('/'.repeat(200), { run: () => ({}), next: END })
        .build();
      const store = new MemoryStore();
      const remit = new Remit(store, core, [long]);
      const started = await remit.start(long, { n: 1 });
      expect(started.status).toBe('completed');
      const source = 'r'.repeat(190);
      await remit.start(long, { n: 1 }, { runId: source });
      const fork = await remit.fork(source, 0);
      expect(fork.runId).toMatch(/\.fork-[0-9a-f]{8}$/);
      expect((await remit.continueRun(fork.runId)).status).toBe('completed');
    }
  });
});

describe('a key REMIT does not know is refused wherever it takes options or a node spec (a misspelling would be ignored)', () => {
  /** A key that is not one of `known`: a near miss of a known one (case, a letter dropped) or any text. */
  const misspelling = (known: readonly string[]) =>
    fc
      .oneof(
        fc.constantFrom(...known).map((k) => k.toLowerCase()),
        fc.constantFrom(...known).map((k) => k.toUpperCase()),
        fc.tuple(fc.constantFrom(...known), fc.nat()).map(([k, i]) => k.slice(0, i % k.length) + k.slice((i % k.length) + 1)),
        fc.string({ minLength: 1, maxLength: 12 }),
      )
      .filter((key) => !known.includes(key));
  const withKey = (base: object, key: string): Record<string, unknown> => ({ ...base, [key]: 1 });
  const refusal = async (call: () => unknown): Promise<unknown> => {
    try {
      return await call();
    } catch (error) {
      return error;
    }
  };

  it('createRemit, start, continueRun, fork and recoverAll: OptionInvalidError naming the key; nothing read or written', async () => {
    const core = await createCore('reference');
    const entries: Array<[string, readonly string[], (remit: Remit, store: MemoryStore, key: string) => Promise<unknown>]> = [
      ['createRemit', ['store', 'workflows', 'core', 'hooks', 'groupPureSteps', 'maxGroupedPureSteps', 'instanceId', 'effectLeaseMs'], (_r, store, key) => createRemit(withKey({ store, workflows: [wf], core }, key) as never)],
      ['start', ['runId'], (remit, _s, key) => remit.start(wf, { n: 1 }, withKey({ runId: 'new' }, key))],
      ['continueRun', ['fromSeq', 'waitForEffectMs'], (remit, _s, key) => remit.continueRun('r', withKey({}, key))],
      ['fork', ['newRunId', 'intent'], (remit, _s, key) => remit.fork('r', 0, withKey({ newRunId: 'new' }, key))],
      ['recoverAll', ['waitForEffectMs', 'concurrency'], (remit, _s, key) => remit.recoverAll(withKey({}, key))],
    ];
    for (const [operation, known, call] of entries) {
      await fc.assert(
        fc.asyncProperty(misspelling(known), async (key) => {
          const store = new MemoryStore();
          const remit = new Remit(store, core, [wf]);
          await remit.start(wf, { n: 1 }, { runId: 'r' });
          const before = await store.readLog('r');
          const error = await refusal(() => call(remit, store, key));
          expect(error, `${operation} { ${key} }`).toBeInstanceOf(OptionInvalidError);
          expect(error).toMatchObject({ code: OPTION_INVALID, option: key, field: key });
          expect((error as Error).message).toContain(`is not an option of ${operation} (known: ${known.join(', ')})`);
          expect((await store.listRuns()).map((r) => r.runId)).toEqual(['r']);
          expect(await store.readLog('r')).toEqual(before);
        }),
        { numRuns: 25 },
      );
    }
  });

  it('a misspelt key inherited from a prototype is refused too (known keys are read through it); class methods are not keys', async () => {
    const remit = new Remit(new MemoryStore(), await createCore('reference'), [wf]);
    await expect(remit.start(wf, { n: 1 }, Object.create({ runid: 'typo' }) as never)).rejects.toMatchObject({ code: OPTION_INVALID, option: 'runid' });
    class StartWith {
      runId = 'from-a-class';
      describe() {
        return this.runId;
      }
    }
    expect((await remit.start(wf, { n: 1 }, new StartWith())).runId).toBe('from-a-class');
  });

  it('openSqliteStore and openMemoryStore: OptionInvalidError naming the key; no file or folder created', () => {
    let i = 0;
    fc.assert(
      fc.property(misspelling(['synchronous', 'busyTimeoutMs', 'create', 'clock']), (key) => {
        const folder = join(dir, `unknown-${i++}`);
        expect(() => openSqliteStore(join(folder, 'remit.db'), withKey({ create: false }, key))).toThrow(expect.objectContaining({ code: OPTION_INVALID, field: key }));
        expect(existsSync(folder)).toBe(false);
      }),
      { numRuns: 25 },
    );
    fc.assert(
      fc.property(misspelling(['backing', 'clock']), (key) => {
        expect(() => new MemoryStore(withKey({}, key))).toThrow(expect.objectContaining({ code: OPTION_INVALID, field: key }));
      }),
      { numRuns: 25 },
    );
  });

  it('workflow() and every kind of node spec: DefinitionInvalidError naming the node and the key', () => {
    const specs: Array<[string, readonly string[], (key: string) => unknown]> = [
      ['workflow', ['name', 'version', 'state', 'description'], (key) => workflow(withKey({ name: 'w', version: '1', state: State }, key) as never)],
      ['pure', ['run', 'next'], (key) => workflow({ name: 'w', version: '1', state: State }).pure('p', withKey({ run: () => ({}), next: END }, key) as never)],
      ['effect', ['run', 'apply', 'next', 'leaseMs'], (key) => workflow({ name: 'w', version: '1', state: State }).effect('p', withKey({ run: () => ({}), next: END }, key) as never)],
      ['interrupt', ['resume', 'apply', 'next'], (key) => workflow({ name: 'w', version: '1', state: State }).interrupt('p', withKey({ resume: z.object({}), apply: () => ({}), next: END }, key) as never)],
    ];
    for (const [kind, known, build] of specs) {
      fc.assert(
        fc.property(misspelling(known), (key) => {
          const error = (() => {
            try {
              build(key);
            } catch (e) {
              return e;
            }
            return undefined;
          })();
          expect(error, `${kind} { ${key} }`).toMatchObject({ code: 'REMIT_DEFINITION_INVALID', field: key, ...(kind === 'workflow' ? {} : { node: 'p' }) });
          expect((error as Error).message).toContain(`(known: ${known.join(', ')})`);
        }),
        { numRuns: 25 },
      );
    }
    // A misspelling that went through before 2026-12-03 (commit 29b377b): an effect's `aply` used to build, and its result was never applied.
    expect(() => workflow({ name: 'w', version: '1', state: State }).effect('charge', { run: () => ({}), aply: () => ({}), next: END } as never)).toThrow(/aply is not a field of an effect node's spec/);
  });

  it('runs() pages with { limit, after }: the pages, joined, are the whole listing, and each reads only its own runs\' logs', async () => {
    const store = new MemoryStore();
    const reads: string[] = [];
    const counting = Object.create(store) as MemoryStore;
    counting.readRecords = (runId, fromSeq, limit) => {
      reads.push(runId);
      return store.readRecords(runId, fromSeq, limit);
    };
    const remit = await createRemit({ store: counting, workflows: [wf], core: 'reference' });
    for (let i = 0; i < 7; i++) await remit.start(wf, { n: i }, { runId: `r${i}` });
    const all = await remit.runs();
    expect(all.map((r) => r.runId)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6']);
    const pages: string[][] = [];
    let after: string | undefined;
    for (;;) {
      reads.length = 0;
      const page = await remit.runs(after === undefined ? { limit: 3 } : { limit: 3, after });
      // Only the page's runs are read (before, every run's whole log at every call).
      expect(reads).toEqual(page.map((r) => r.runId));
      if (page.length === 0) break;
      pages.push(page.map((r) => r.runId));
      after = page[page.length - 1]!.runId;
    }
    expect(pages).toEqual([['r0', 'r1', 'r2'], ['r3', 'r4', 'r5'], ['r6']]);
    expect((await remit.runs({ after: 'r4' })).map((r) => r.runId)).toEqual(['r5', 'r6']);
    expect(await remit.runs({ limit: 2 })).toEqual(all.slice(0, 2));
    expect(await remit.runs(undefined)).toEqual(all);
  });

  it('runs({ status }) gives the runs of those statuses; its pages, joined, are the listing filtered, and limit counts the runs given (fast-check over runs and page sizes)', async () => {
    const parking = workflow({ name: 'parking', version: '1', state: z.object({ n: z.number(), ok: z.boolean().optional() }) })
      .pure('decide', { run: () => ({}), next: (s) => (s.n % 2 === 1 ? 'ask' : END) })
      .interrupt('ask', { resume: z.boolean(), apply: (_s, ok) => ({ ok }), next: END })
      .build();
    const statuses = fc.constantFrom<ListedStatus>('running', 'parked', 'completed', 'failed', 'damaged');
    await fc.assert(fc.asyncProperty(
      fc.array(fc.nat(9), { minLength: 0, maxLength: 12 }), fc.integer({ min: 1, max: 5 }), fc.uniqueArray(statuses, { minLength: 1, maxLength: 3 }),
      async (inputs, pageSize, wanted) => {
        const remit = await createRemit({ store: new MemoryStore(), workflows: [parking], core: 'reference' });
        for (const [i, n] of inputs.entries()) await remit.start(parking, { n }, { runId: `r${String(i).padStart(2, '0')}` });
        const all = await remit.runs({ limit: 1000 });
        const expected = all.filter((r) => wanted.includes(r.status)).map((r) => r.runId);
        expect((await remit.runs({ status: wanted, limit: 1000 })).map((r) => r.runId)).toEqual(expected);
        const joined: string[] = [];
        let after: string | undefined;
        for (;;) {
          const page = await remit.runs({ status: wanted, limit: pageSize, ...(after === undefined ? {} : { after }) });
          expect(page.length).toBeLessThanOrEqual(pageSize);
          for (const run of page) expect(wanted).toContain(run.status);
          joined.push(...page.map((r) => r.runId));
          if (page.length < pageSize) break;
          after = page[page.length - 1]!.runId;
        }
        expect(joined).toEqual(expected);
        await remit.close();
      },
    ), { numRuns: 40 });
  });

  it('runs({ status }) refuses a status it does not give, naming the option; one status or an array', async () => {
    const remit = await createRemit({ store: new MemoryStore(), workflows: [wf], core: 'reference' });
    await remit.start(wf, { n: 0 }, { runId: 'r1' });
    for (const status of ['parked ', 'PARKED', 'empty', [], ['parked', 'done'], 3]) {
      await expect(remit.runs({ status: status as ListedStatus })).rejects.toMatchObject({ code: 'REMIT_OPTION_INVALID', field: 'status' });
    }
    const [only] = await remit.runs();
    expect((await remit.runs({ status: only!.status })).map((r) => r.runId)).toEqual(['r1']);
    expect(await remit.runs({ status: ['failed', 'damaged'] })).toEqual([]);
  });

  it('runs() pages in creation order, then run id, whatever order a store lists in; runs created in one millisecond are each in one page', async () => {
    const store = new MemoryStore({ clock: () => 1_000 });
    // A custom store listing newest first (the store contract does not ask for an order).
    const reversed = Object.create(store) as MemoryStore;
    reversed.listRuns = async () => (await store.listRuns()).reverse();
    const remit = await createRemit({ store: reversed, workflows: [wf], core: 'reference' });
    for (const id of ['d', 'b', 'e', 'a', 'c']) await remit.start(wf, { n: 0 }, { runId: id });
    const paged: string[] = [];
    for (let after: string | undefined; ; ) {
      const page = await remit.runs(after === undefined ? { limit: 2 } : { limit: 2, after });
      if (page.length === 0) break;
      paged.push(...page.map((r) => r.runId));
      after = page[page.length - 1]!.runId;
    }
    expect(paged).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('runs() checks its options before it reads anything: a mistyped limit on a failing store is the option\'s error', async () => {
    const store = new MemoryStore();
    let listings = 0;
    const failing = Object.create(store) as MemoryStore;
    failing.listRuns = async () => {
      listings++;
      throw new Error('the store is down');
    };
    const remit = await createRemit({ store: failing, workflows: [wf], core: 'reference' });
    await expect(remit.runs({ limit: 0 })).rejects.toMatchObject({ code: 'REMIT_OPTION_INVALID', field: 'limit' });
    await expect(remit.runs({ after: 7 as unknown as string })).rejects.toMatchObject({ code: 'REMIT_OPTION_INVALID', field: 'after' });
    expect(listings).toBe(0);
  });

  it('runs() refuses options it cannot honour, naming them: a bad limit, a cursor naming no listed run, an unknown option, a second argument', async () => {
    const remit = await createRemit({ store: new MemoryStore(), workflows: [wf], core: 'reference' });
    await remit.start(wf, { n: 0 }, { runId: 'r1' });
    for (const limit of [0, -1, 1.5, '3', Number.NaN]) {
      await expect(remit.runs({ limit: limit as number })).rejects.toMatchObject({ code: 'REMIT_OPTION_INVALID', field: 'limit' });
    }
    await expect(remit.runs({ after: 5 as unknown as string })).rejects.toMatchObject({ code: 'REMIT_OPTION_INVALID', field: 'after' });
    // Read as "from the start" it would list the first page again; as "nothing after", end the paging.
    await expect(remit.runs({ after: 'gone' })).rejects.toThrow(/option after names no run of this store/);
    await expect(remit.runs({ limt: 1 } as never)).rejects.toMatchObject({ code: 'REMIT_OPTION_INVALID', field: 'limt' });
    const twoArguments = await (remit.runs as (...a: unknown[]) => Promise<unknown>)({}, 2).catch((e: unknown) => e);
    expect(twoArguments).toBeInstanceOf(ArgumentInvalidError);
    expect((twoArguments as Error).message).toMatch(/^runs\(\) must be called with at most one argument/);
  });

  it('a bad waitForEffectMs of continueRun names the run, as a misspelt option of the same call does', async () => {
    const remit = await createRemit({ store: new MemoryStore(), workflows: [wf], core: 'reference' });
    for (const value of [-1, 1.5, '5', Number.NaN]) {
      await expect(remit.continueRun('r1', { waitForEffectMs: value as number })).rejects.toMatchObject({ code: 'REMIT_OPTION_INVALID', field: 'waitForEffectMs', runId: 'r1' });
    }
  });
});
