/**
 * Support for the sub-check table (checkers-subchecks.test.ts): the sub-checks of a checker's
 * source (every `f.expect(...)` and `f.fail(...)` call, with a pattern its message matches), the
 * recoverer-race observation, and edits that insert sink lines without breaking the windows.
 */
import type { CellRun } from '../observations.js';
import type { SinkLine } from '../sink.js';
import { goodFaultRun, view } from './testing.js';

/** One `f.expect(...)` / `f.fail(...)` call in a checker's source. */
export interface SubCheck {
  file: string;
  /** 1-based line of the call. */
  line: number;
  kind: 'expect' | 'fail';
  /** The whole call text, `f.expect(` to its closing parenthesis. */
  text: string;
  /** Offsets of the call in the source: [start of `f.`, one past the closing parenthesis). */
  start: number;
  end: number;
  /** Offsets of the top-level arguments inside the parentheses. */
  args: { start: number; end: number }[];
  /** Matches exactly the messages the call can produce: its literals, anything for the rest. */
  message: RegExp;
}

const CALL = /\bf\.(expect|fail)\(/g;

/** Every sub-check of one checker source, in source order. */
export function subChecks(file: string, source: string): SubCheck[] {
  const out: SubCheck[] = [];
  for (const m of source.matchAll(CALL)) {
    const start = m.index;
    const open = start + m[0].length - 1;
    const { end, args } = scanArgs(source, open);
    const last = args[args.length - 1];
    if (last === undefined) throw new Error(`${file}: a call without arguments at offset ${start}`);
    out.push({
      file,
      line: source.slice(0, start).split('\n').length,
      kind: m[1] as 'expect' | 'fail',
      text: source.slice(start, end),
      start,
      end,
      args,
      message: messagePattern(source.slice(last.start, last.end)),
    });
  }
  return out;
}

/** From `(` at `open`: the offset past its matching `)` and the top-level argument ranges (trimmed, empty ones dropped). */
function scanArgs(src: string, open: number): { end: number; args: { start: number; end: number }[] } {
  const args: { start: number; end: number }[] = [];
  let depth = 0;
  let argStart = open + 1;
  const push = (to: number) => {
    let a = argStart;
    let b = to;
    while (a < b && /\s/.test(src[a]!)) a++;
    while (b > a && /\s/.test(src[b - 1]!)) b--;
    if (b > a) args.push({ start: a, end: b });
  };
  let i = open;
  while (i < src.length) {
    const c = src[i]!;
    if (c === "'" || c === '"') i = skipQuoted(src, i);
    else if (c === '`') i = skipTemplate(src, i).end;
    else if (c === '/' && src[i + 1] === '/') i = src.indexOf('\n', i);
    else {
      if (c === '(' || c === '[' || c === '{') depth++;
      else if (c === ')' || c === ']' || c === '}') {
        depth--;
        if (depth === 0) {
          push(i);
          return { end: i + 1, args };
        }
      } else if (c === ',' && depth === 1) {
        push(i);
        argStart = i + 1;
      }
      i++;
    }
  }
  throw new Error(`unbalanced call at offset ${open}`);
}

function skipQuoted(src: string, i: number): number {
  const q = src[i];
  i++;
  while (i < src.length && src[i] !== q) i += src[i] === '\\' ? 2 : 1;
  return i + 1;
}

/** A template literal at `i`: its end and its parts (text, or null for an interpolation). */
function skipTemplate(src: string, i: number): { end: number; parts: (string | null)[] } {
  const parts: (string | null)[] = [];
  let text = '';
  i++;
  while (i < src.length) {
    const c = src[i]!;
    if (c === '\\') {
      text += src[i + 1];
      i += 2;
    } else if (c === '`') {
      parts.push(text);
      return { end: i + 1, parts };
    } else if (c === '$' && src[i + 1] === '{') {
      parts.push(text, null);
      text = '';
      i += 2;
      let depth = 1;
      while (depth > 0) {
        const d = src[i]!;
        if (d === "'" || d === '"') i = skipQuoted(src, i);
        else if (d === '`') i = skipTemplate(src, i).end;
        else {
          if (d === '{') depth++;
          else if (d === '}') depth--;
          i++;
        }
      }
    } else {
      text += c;
      i++;
    }
  }
  throw new Error('unterminated template');
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The messages an expression can evaluate to: its string literals and templates (interpolations
 * match anything), joined by `+`; from the first other code on (a condition), anything.
 */
function messagePattern(expr: string): RegExp {
  const pieces: (string | null)[] = [];
  let i = 0;
  while (i < expr.length) {
    const c = expr[i]!;
    if (c === "'" || c === '"') {
      const end = skipQuoted(expr, i);
      pieces.push(expr.slice(i + 1, end - 1).replace(/\\(.)/g, '$1'));
      i = end;
    } else if (c === '`') {
      const t = skipTemplate(expr, i);
      pieces.push(...t.parts);
      i = t.end;
    } else if (c === '(' || c === ')' || c === '+' || /\s/.test(c)) {
      i++;
    } else {
      pieces.push(null);
      break;
    }
  }
  let re = '';
  let wild = false;
  for (const p of pieces) {
    if (p === null) wild = true;
    else if (p.length > 0) {
      re += (wild ? '[\\s\\S]*' : '') + escape(p);
      wild = false;
    }
  }
  if (wild) re += '[\\s\\S]*';
  return new RegExp(`^${re}$`);
}

/** Shifts every sink window under `value` that reaches `at` or beyond by `by` lines. */
export function shiftWindows(value: unknown, at: number, by: number): void {
  if (value === null || typeof value !== 'object') return;
  const w = value as { from?: unknown; to?: unknown };
  if (typeof w.from === 'number' && typeof w.to === 'number') {
    if (w.from >= at) w.from += by;
    if (w.to >= at) w.to += by;
    return;
  }
  for (const v of Object.values(value)) shiftWindows(v, at, by);
}

/**
 * Inserts `line` into the sink at `index`, inside the window that holds the line now at `index`
 * (or that ends there): later windows and faults' sink offsets move on by one.
 */
export function insertLine(run: CellRun, index: number, line: SinkLine): void {
  shiftWindows(run.steps, index + 1, 1);
  for (const fault of run.faults) if (fault.sinkOffset >= index + 1) fault.sinkOffset += 1;
  run.sink.splice(index, 0, line);
}

/**
 * goodFaultRun, crashed instead just after charge's intent was durable (before its handler ran),
 * then continued by two recoverers on two hosts: one claims the attempt, invokes charge once and
 * appends its completion; the other is refused with CONFLICT.
 */
export function goodRaceRun(): CellRun {
  const run = goodFaultRun();
  const ids = run.scenario.runIds;
  const point = 'after-commit:EFFECT_INTENT@charge';
  const fault = run.faults[0]!;
  fault.events = [{ event: 'fault', point, kind: 'sigkill' }];
  run.faultsFired = [...fault.events];
  fault.sinkOffset = 6;
  fault.view = { ...fault.view!, records: fault.view!.records.slice(0, 3), completedNodes: ['compute'], effectsDone: [], nextAction: 'AWAIT_ATTEMPT charge' };
  const after = view(ids.main, { records: run.mainView!.records.slice(0, 7), status: 'parked', completedNodes: ['compute', 'charge'], claims: 0 });
  run.steps.recoverConcurrent = {
    mode: 'hosts',
    hosts: ['remit-h1', 'remit-h2'],
    outcomes: [
      { outcome: 'parked' },
      { outcome: 'refused', refusal: { code: 'CONFLICT', message: 'ConflictError: another sequencer appended first' } },
    ],
    waiting: { start: 2, append: 2 },
    before: fault.view,
    after,
    window: { from: 6, to: 8 },
  };
  return run;
}
