/**
 * toJSON (what `--json` prints) gives every field an error has, and every extra field docs/errors.md
 * lists for its class; it is JSON whatever the error holds (a Promise a route returned, a cyclic
 * object passed as an option).
 */

import fs from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as errors from './errors.js';
import { RemitError } from './errors.js';
import { z } from 'zod';
import { exitCodeForResult } from './cli/output.js';
import { createRemit, END, openMemoryStore, openSqliteStore, renderInspection, workflow } from './index.js';
import { openPostgresStore } from './store/postgres.js';
import { checkWorkflow, MemoryEffectSink } from './testing/index.js';

const subject = { runId: 'r', seq: 3, node: 'n', field: 'f' };
const issues = [{ path: 'a', message: 'bad', code: 'invalid_type' }];

/** One instance of every RemitError class errors.ts exports, each with every field it can carry. */
const samples: Record<string, RemitError> = {
  DefinitionInvalidError: new errors.DefinitionInvalidError('wf', 'a problem', subject),
  DefinitionMismatchError: new errors.DefinitionMismatchError('r', 'wf', ['node a was removed']),
  UnknownWorkflowError: new errors.UnknownWorkflowError('wf', ['other'], subject),
  RunNotFoundError: new errors.RunNotFoundError('r'),
  RunExistsError: new errors.RunExistsError('r'),
  RunIdInvalidError: new errors.RunIdInvalidError('', 'is empty'),
  ArgumentInvalidError: new errors.ArgumentInvalidError('seq', 'an integer', '1.5', subject),
  StateInvalidError: new errors.StateInvalidError(subject, issues as never),
  NotJsonError: new errors.NotJsonError('state', 'a BigInt', subject),
  ValueUnfaithfulError: new errors.ValueUnfaithfulError('state', 'CHANGED_BY_JSON', 'a Date', subject),
  RouteInvalidError: new errors.RouteInvalidError('nowhere', subject),
  HandlerThrewError: new errors.HandlerThrewError(subject, new Error('boom')),
  ResumeValueInvalidError: new errors.ResumeValueInvalidError('ask@4', subject, issues as never),
  UnknownInterruptError: new errors.UnknownInterruptError('ask@4', subject, 'no such node'),
  NotParkedError: new errors.NotParkedError('ask@4', 'completed', subject),
  AlreadyConsumedError: new errors.AlreadyConsumedError('ask@4', subject, { value: { approved: true }, same: false }),
  ConflictError: new errors.ConflictError('r', 3, 4),
  EffectInFlightError: new errors.EffectInFlightError('r', 3, 'n', 'r/n/3', 1, 'host-a', 1_000, 500),
  OptionInvalidError: new errors.OptionInvalidError('maxConnections', 0, 'must be a whole number from 1', subject),
  NotACheckpointError: new errors.NotACheckpointError('r', 3, 'EFFECT_INTENT'),
  BeyondHeadError: new errors.BeyondHeadError('r', 9, 3),
  ImplicitForkError: new errors.ImplicitForkError('r', 1, 3, false),
  ForkTargetExistsError: new errors.ForkTargetExistsError('t', subject),
  LogCorruptError: new errors.LogCorruptError('r', 3, 120, 'BAD_CHECKSUM'),
  LogTornError: new errors.LogTornError('r', 3, 7),
  RepairRefusedError: new errors.RepairRefusedError('r', 3, 'a resume claim'),
  StoreError: new errors.StoreError('sqlite', 'append', 'SQLITE_BUSY', subject, new Error('busy')),
  StoreNotFoundError: new errors.StoreNotFoundError('sqlite', '/no/such.db', 'pass create: true'),
  CoreUnavailableError: new errors.CoreUnavailableError('wasm', 'WASM_NOT_BUILT', 'not built'),
  CoreRefusedError: new errors.CoreRefusedError('BAD_REQUEST', subject),
};

const remitErrorClasses = Object.entries(errors)
  .filter(([, value]) => typeof value === 'function' && value.prototype instanceof RemitError)
  .map(([name]) => name);

/** The extra fields (backticked) of the "subject and extra fields" column of docs/errors.md's table, by class. */
function documentedExtraFields(): Map<string, string[]> {
  const text = fs.readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const out = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const cells = line.split(' | ');
    const klass = /^`(\w+Error)`$/.exec(cells[1]?.trim() ?? '')?.[1];
    if (!klass || cells.length < 5 || !klass.endsWith('Error')) continue;
    // The subject's fields, then `;` and the extra fields (a class without subject lists only extras).
    const column = cells[3]!;
    const extras = column.includes(';') ? column.slice(column.indexOf(';') + 1) : column;
    out.set(klass, [...extras.matchAll(/`(\w+)`/g)].map((m) => m[1]!));
  }
  return out;
}

describe('isRemitError and AnyRemitError', () => {
  it('the union has a class for every code, and switching on the code narrows to that class', () => {
    expectTypeOf<Exclude<errors.ErrorCode, errors.AnyRemitError['code']>>().toEqualTypeOf<never>();
    const fields: unknown[] = [];
    for (const error of [...Object.values(samples), new Error('plain'), 'text', null] as unknown[]) {
      if (!errors.isRemitError(error)) continue;
      switch (error.code) {
        case errors.ErrorCode.RESUME_VALUE_INVALID: expectTypeOf(error).toEqualTypeOf<errors.ResumeValueInvalidError>(); fields.push(error.issues); break;
        case errors.ErrorCode.EFFECT_IN_FLIGHT: fields.push(error.retryAfterMs); break;
        case errors.ErrorCode.ALREADY_CONSUMED: fields.push(error.sameValue); break;
        case errors.ErrorCode.NOT_PARKED: expectTypeOf(error.status).toEqualTypeOf<'empty' | 'running' | 'completed' | 'failed'>(); break;
        default: break;
      }
    }
    expect(fields).toHaveLength(3);
    expect(Object.values(samples).every((e) => errors.isRemitError(e))).toBe(true);
    expect([new Error('x'), 'x', null, undefined, { code: errors.ErrorCode.STORE }].some((e) => errors.isRemitError(e))).toBe(false);
  });
});

describe('RemitError.toJSON', () => {
  it('has a sample of every RemitError class errors.ts exports', () => {
    expect(Object.keys(samples).sort()).toEqual([...remitErrorClasses].sort());
  });

  it.each(Object.entries(samples))('%s: gives code, name, message and every field the error has, as JSON', (name, error) => {
    const json = error.toJSON();
    expect(json).toMatchObject({ code: error.code, name, message: error.message });
    for (const [key, value] of Object.entries(error)) {
      if (value !== undefined) expect(json, `field ${key}`).toHaveProperty(key);
    }
    expect(JSON.parse(JSON.stringify(error))).toEqual(json);
  });

  it('gives every extra field docs/errors.md lists for each class', () => {
    const documented = documentedExtraFields();
    expect([...documented.keys()].sort()).toEqual([...remitErrorClasses].sort());
    for (const [klass, fields] of documented) {
      const json = samples[klass]!.toJSON();
      for (const field of fields) expect(json, `${klass}.${field} (docs/errors.md)`).toHaveProperty(field);
    }
  });

  it('lists in docs/errors.md every extra field each class carries (a field a user cannot learn of is one they cannot rely on)', () => {
    const documented = documentedExtraFields();
    const subjectAndBase = new Set(['code', 'name', 'message', 'cause', 'runId', 'seq', 'node', 'field']);
    for (const [klass, error] of Object.entries(samples)) {
      const extra = Object.keys(error.toJSON()).filter((key) => !subjectAndBase.has(key));
      for (const key of extra) expect(documented.get(klass), `${klass}.${key} (docs/errors.md)`).toContain(key);
    }
  });

  it('gives the cause (what node code or the store threw) as JSON: its name, message and code, as docs/errors.md says', () => {
    const reset = Object.assign(new TypeError('socket hang up'), { code: 'ECONNRESET' });
    expect(new errors.HandlerThrewError(subject, reset).toJSON()['cause']).toEqual({ name: 'TypeError', message: 'socket hang up', code: 'ECONNRESET' });
    expect(new errors.StoreError('sqlite', 'append', 'SQLITE_BUSY', subject, new Error('busy')).toJSON()['cause']).toEqual({ name: 'Error', message: 'busy' });
    expect(new errors.HandlerThrewError(subject, { message: 'plain object' }).toJSON()['cause']).toBe('plain object');
    expect(new errors.HandlerThrewError(subject, 42).toJSON()['cause']).toBe('42');
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    for (const hostile of [revoked.proxy, Object.defineProperty(new Error('x'), 'name', { get() { throw new Error('no'); } })]) {
      expect(typeof JSON.stringify(new errors.HandlerThrewError(subject, hostile))).toBe('string');
    }
    expect(new errors.RunNotFoundError('r').toJSON()).not.toHaveProperty('cause');
    const text = fs.readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    expect(text).toContain('`cause` as `{ name, message, code }`');
  });

  it('names the workflow, the route target and the core\'s reason (once left out of --json)', () => {
    expect(samples['DefinitionInvalidError']!.toJSON()).toMatchObject({ workflow: 'wf', runId: 'r', seq: 3, node: 'n', field: 'f' });
    expect(samples['RouteInvalidError']!.toJSON()).toMatchObject({ target: 'nowhere' });
    expect(samples['CoreRefusedError']!.toJSON()).toMatchObject({ reason: 'BAD_REQUEST' });
  });

  it('is JSON whatever a route returned or an option held', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    const hostile: unknown[] = [Promise.resolve('a'), () => 'a', 10n, Symbol('s'), cyclic, undefined, Number.NaN];
    for (const value of hostile) {
      const route = new errors.RouteInvalidError(value, subject);
      const option = new errors.OptionInvalidError('pool', value, 'is not an object', subject);
      for (const error of [route, option]) {
        const json = JSON.parse(JSON.stringify(error)) as Record<string, unknown>;
        expect(typeof json[error === route ? 'target' : 'value']).toBe('string');
      }
    }
    expect(new errors.RouteInvalidError(Promise.resolve('a'), subject).toJSON()['target']).toMatch(/^a Promise/);
    expect(new errors.OptionInvalidError('pool', 'x'.repeat(100), 'is bad').toJSON()['value']).toBe(JSON.stringify(`${'x'.repeat(80)}…`));
  });
});

describe('an argument of the wrong shape gets the class docs/errors.md lists it under', () => {
  /** The row of docs/errors.md's table for a class. */
  const rowOf = (klass: string): string => {
    const text = fs.readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    return text.split('\n').find((line) => line.includes(` | \`${klass}\` | `)) ?? '';
  };
  const wf = workflow({ name: 'shape', version: '1', state: z.object({}) }).pure('a', { run: () => ({}), next: END }).build();

  it.each([
    ['createRemit', async () => createRemit(null as never)],
    ['recoverAll', async () => (await createRemit({ store: openMemoryStore(), workflows: [wf], core: 'reference' })).recoverAll(null as never)],
    ['renderInspection', async () => renderInspection(null as never)],
    ['checkWorkflow', async () => checkWorkflow(wf, null as never)],
    ['MemoryEffectSink', async () => new MemoryEffectSink(null as never)],
    ['openMemoryStore', async () => openMemoryStore(null as never)],
    ['openSqliteStore', async () => openSqliteStore(':memory:', null as never)],
    ['openPostgresStore', async () => openPostgresStore(null as never)],
  ])('%s', async (name, call) => {
    const error: unknown = await call().then(() => undefined, (thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(RemitError);
    expect(rowOf((error as RemitError).name), `${name} in the row of ${(error as RemitError).name}`).toContain(`\`${name}\``);
  });
});

describe('the CLI exit code of a run\'s result is the one docs/errors.md gives for its status', () => {
  const exitRow = (code: number) => fs.readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8').split('\n').find((line) => line.startsWith(`| ${code} | `)) ?? '';

  it.each(['parked', 'completed', 'running', 'failed'] as const)('%s', (status) => {
    const code = exitCodeForResult({ status } as never);
    expect(exitRow(code), `exit ${code} for a ${status} run`).toMatch(new RegExp(status === 'failed' ? 'failed terminally' : status === 'running' ? '`running`' : status));
  });
});

describe('every option and store code the library refuses with is named in docs/errors.md', () => {
  /** The non-test TypeScript files of the library, under src/. */
  function sources(dir: URL): string[] {
    return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      if (entry.isDirectory()) return sources(new URL(`${entry.name}/`, dir));
      return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [fs.readFileSync(new URL(entry.name, dir), 'utf8')] : [];
    });
  }

  it('each store code the library gives a StoreError (new StoreError(..., code), storeCode: code, and SQLite codes it names) is in the row of REMIT_STORE', () => {
    const row = fs.readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8').split('\n').find((line) => line.startsWith('| `REMIT_STORE` |'))!;
    const codes = new Set(sources(new URL('./', import.meta.url)).flatMap((text) => [
      ...text.matchAll(/StoreError\(\s*[^,()]+(?:\([^)]*\))?,\s*[^,]+,\s*'([A-Z][A-Z_0-9]+)'/g),
      ...text.matchAll(/storeCode: '([A-Z][A-Z_0-9]+)'/g),
      ...text.matchAll(/storeLied\([^,]+,\s*'([A-Z_]+)'/g),
      ...text.matchAll(/'(SQLITE_[A-Z_]+)'/g),
    ].map((m) => m[1]!)));
    expect(codes.size).toBeGreaterThan(10);
    expect([...codes].filter((code) => !row.includes(`\`${code}\``))).toEqual([]);
  });

  it('each literal option name of a `new OptionInvalidError(...)` in the library is in the row of REMIT_OPTION_INVALID', () => {
    const row = fs.readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8').split('\n').find((line) => line.startsWith('| `REMIT_OPTION_INVALID` |'))!;
    const options = new Set(sources(new URL('./', import.meta.url)).flatMap((text) => [...text.matchAll(/new OptionInvalidError\('([^']+)'/g)].map((m) => m[1]!)));
    expect(options.size).toBeGreaterThan(20);
    // Options named by where they sit (pool.max) are listed in docs/errors.md as written; 'options' is the argument itself.
    const missing = [...options].filter((option) => !row.includes(`\`${option}\``) && !row.includes(`field \`${option}\``));
    expect(missing).toEqual([]);
  });
});

describe('every storeCode docs/postgres.md lists is named in docs/errors.md\'s REMIT_STORE row', () => {
  it('so a reader of errors.md learns each code the PostgreSQL store gives, and where it is explained', () => {
    const postgres = fs.readFileSync(new URL('../../docs/postgres.md', import.meta.url), 'utf8');
    const section = postgres.slice(postgres.indexOf('## Errors'), postgres.indexOf('\n## ', postgres.indexOf('## Errors') + 1));
    const codes = [...section.matchAll(/^\| `([A-Z_]+)`/gm), ...section.matchAll(/, `([A-Z_]+)` \(/g)].map((m) => m[1]!);
    expect(codes.length).toBeGreaterThan(8);
    const row = fs.readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8').split('\n').find((line) => line.startsWith('| `REMIT_STORE` |'))!;
    expect(codes.filter((code) => !row.includes(`\`${code}\``))).toEqual([]);
  });
});

describe('what is not a RemitError (docs/errors.md)', () => {
  it('an error a custom store throws that is not a StoreError reaches the caller as it is, as the page says', async () => {
    const text = fs.readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    expect(text.includes('so do errors thrown by a store of your own'), 'docs/errors.md says so').toBe(true);
    const wf = workflow({ name: 'custom-store', version: '1', state: z.object({}) }).pure('a', { run: () => ({}), next: END }).build();
    const onFire = new TypeError('disk on fire');
    const store = Object.assign(Object.create(openMemoryStore()) as object, { append: async () => { throw onFire; } });
    const remit = await createRemit({ store: store as never, workflows: [wf], core: 'reference' });
    await expect(remit.start(wf, {}, { runId: 'x' })).rejects.toBe(onFire);
  });
});

describe('caller text in a message (from a security review)', () => {
  it('an unknown interrupt id that is not printable ASCII is quoted as JSON, so that it cannot forge a line of a log; a usual id is as it is', async () => {
    const wf = workflow({ name: 'ask', version: '1', state: z.object({}) }).interrupt('approve', { resume: z.boolean(), apply: () => ({}), next: END }).build();
    const remit = await createRemit({ store: openMemoryStore(), workflows: [wf], core: 'reference' });
    const parked = await remit.start(wf, {}, { runId: 'r' });
    const forged = 'x\nERROR forged line\u001b[2J@6';
    const error = await remit.resume('r', forged, true).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(errors.UnknownInterruptError);
    expect((error as Error).message).not.toMatch(/[\n\u001b]/);
    expect((error as Error).message).toContain(JSON.stringify(forged));
    expect(new errors.UnknownInterruptError('approve@9', {}, 'not parked there').message).toMatch(/^unknown interrupt approve@9: /);
    // What JSON keeps as it is (C1 controls, separators, bidi overrides) is escaped too; an empty id shows as "".
    for (const id of ['x\u0085FORGED', 'x\u009b2J', 'x\u2028y', 'x\u202eevil']) expect(new errors.UnknownInterruptError(id, {}, 'why').message).toMatch(/^unknown interrupt "x[^\u0085\u009b\u2028\u202e]*": why$/);
    expect(new errors.UnknownInterruptError('', {}, 'why').message).toBe('unknown interrupt "": why');
    await remit.resume('r', parked.interrupt!.id, true);
    await remit.close();
  });
});
