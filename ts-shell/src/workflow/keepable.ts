/**
 * Whether a zod schema has a value the log can keep: a JSON value the schema accepts and turns
 * into itself (what values.ts requires of every value it writes: its output reads back from JSON
 * as itself and passes the schema again unchanged). A resume schema without one would leave a run
 * parked at its interrupt for ever: every resume is refused, and changing the schema changes the
 * workflow's fingerprint, so the parked run is then refused as a DefinitionMismatchError. build()
 * refuses such a schema (workflow.ts).
 *
 * The walk is conservative: it refuses only what it can see. It knows the types whose values have
 * no JSON form (a Date, a bigint, NaN, a symbol, a Map, a Set, a function, a promise, a File, an
 * instance of a class), the types that accept nothing but `undefined` or nothing at all (void,
 * undefined, never), and how wrappers, lazies, pipes, unions, intersections, objects, tuples,
 * arrays and records combine them. A refinement, a transform or a custom check it cannot see into
 * may accept a value, and so may anything it does not know.
 */

/** One part of a schema that no kept value can pass: the schema as written, where, why, and what to use instead. */
interface Unkeepable {
  /** How the schema is written: `z.date()`, `z.coerce.bigint()`, `z.instanceof(Account)`. */
  schema: string;
  /** Where it is in the value: field names and item indexes from the top. */
  path: ReadonlyArray<string | number>;
  /** Why no value of it can be kept, as a clause. */
  why: string;
  /** What to write instead. */
  instead: string;
  /** It accepts no JSON value at all (void, undefined, never): "no payload" is z.null(). */
  noValue: boolean;
  /** A pipe whose output its input refuses (pipeMismatch): earlier releases built it. */
  pipe?: true;
}

/**
 * The message build() throws for a resume schema without a value the log can keep, or null when
 * the schema may have one. Several parts: a union none of whose options has one, each named.
 * `onlyPipes`: every part found is a pipe whose output its input refuses (pipeMismatch). Such a
 * schema was built by earlier releases, so a workflow holding one may have runs in flight: it is
 * built, and only its new runs are refused (workflow.ts, unresumableInterrupt), so that those
 * runs finish.
 */
export function resumeWithoutKeptValue(schema: unknown, node: string): { message: string; onlyPipes: boolean } | null {
  let found: ReturnType<typeof unkeepableParts>;
  try {
    found = unkeepableParts(schema);
  } catch {
    // A schema whose parts throw when looked at (a getter, a revoked proxy): nothing is proved, so
    // nothing is refused here (zod meets the same throw where it reads that part).
    return null;
  }
  if (found === null) return null;
  return { message: keptValueMessage(found, node), onlyPipes: found.every((part) => part.pipe === true) };
}

/** What build() says of the parts that leave a resume schema without a kept value. */
function keptValueMessage(found: Unkeepable[], node: string): string {
  const lead = `the resume schema of interrupt ${node}`;
  const unresumable = 'so a run parked there could never be resumed';
  if (found.every((part) => part.noValue)) {
    const part = found[0]!;
    return `${lead} accepts no JSON value (it holds a ${part.schema}${at(part.path)} that every value must pass), ${unresumable}; ` +
      'for an interrupt that takes no value use z.null() and resume it with null';
  }
  const instead = unique(found.map((part) => part.instead)).join('; or ');
  const keep = 'the log keeps a resume value as JSON, and it must read back as itself';
  if (found.length === 1) {
    const part = found[0]!;
    return `${lead} accepts no value the log can keep (it holds a ${part.schema}${at(part.path)} that every value must pass, and ${part.why}; ` +
      `${keep}), ${unresumable}; use ${instead}`;
  }
  const options = unique(found.map((part) => `${part.schema}${at(part.path)}, as ${part.why}`)).join('; ');
  return `${lead} accepts no value the log can keep (no option of its union has one: ${options}; ${keep}), ${unresumable}; ` +
    `use ${instead}`;
}

/**
 * The parts of `schema` that leave it without a value the log can keep (one, or one for each
 * option of a union none of which has such a value), or null when it may have one.
 */
function unkeepableParts(schema: unknown): Unkeepable[] | null {
  return new Walk().visit(schema, 'kept', []);
}

/**
 * What a walk asks of a schema:
 * - `kept`: no JSON value it accepts and gives back unchanged (a value the log can keep);
 * - `in`: no JSON value it accepts (what a pipe's first schema is given back from the log);
 * - `out`: no input, JSON or not, for which it gives a JSON value (what a pipe's last schema gives).
 * A schema refused `in` or `out` is refused `kept` too; `z.coerce.date()` is refused `kept` and
 * `out`, not `in` (it accepts a string).
 */
type Role = 'kept' | 'in' | 'out';

interface SchemaDef {
  type?: unknown;
  coerce?: unknown;
  innerType?: unknown;
  getter?: unknown;
  in?: unknown;
  out?: unknown;
  options?: unknown;
  values?: unknown;
  shape?: unknown;
  left?: unknown;
  right?: unknown;
  items?: unknown;
  element?: unknown;
  checks?: unknown;
  keyType?: unknown;
  valueType?: unknown;
  partial?: unknown;
}

interface Internals {
  def?: SchemaDef;
  optin?: unknown;
  values?: unknown;
  bag?: { Class?: unknown };
}

function internalsOf(schema: unknown): Internals | undefined {
  const internals = (schema as { _zod?: unknown } | null | undefined)?._zod;
  return internals !== null && typeof internals === 'object' ? (internals as Internals) : undefined;
}

/** A property of zod's internals, or undefined when reading it throws (a lazy whose getter throws). */
function read<K extends keyof Internals>(internals: Internals, key: K): Internals[K] | undefined {
  try {
    return internals[key];
  } catch {
    return undefined;
  }
}

const NO_VALUE: Record<string, Omit<Unkeepable, 'path' | 'schema'>> = {
  void: { why: 'undefined has no JSON form', instead: 'z.null() for no value', noValue: true },
  undefined: { why: 'undefined has no JSON form', instead: 'z.null() for no value', noValue: true },
  never: { why: 'it accepts no value', instead: 'z.null() for no value', noValue: true },
};

const DATE = 'z.iso.datetime() for a date and time (an ISO 8601 string: new Date(value) in apply), or z.iso.date() for a day';
const BIGINT = 'z.string() for a big integer (BigInt(value) in apply), or z.number().int() for one within Number.MAX_SAFE_INTEGER';

/** Types no value of which has a JSON form that reads back as itself, by zod's `def.type`. */
const NO_JSON_FORM: Record<string, { schema: string; why: string; instead: string }> = {
  date: { schema: 'z.date()', why: 'a Date reads back from JSON as a string', instead: DATE },
  bigint: { schema: 'z.bigint()', why: 'a bigint has no JSON form', instead: BIGINT },
  nan: { schema: 'z.nan()', why: 'NaN reads back from JSON as null', instead: 'z.null() for "no number", or z.number()' },
  symbol: { schema: 'z.symbol()', why: 'a symbol has no JSON form', instead: 'z.string() or z.enum([...])' },
  map: { schema: 'z.map(...)', why: 'a Map reads back from JSON as {}', instead: 'z.record(keys, values), or z.array(z.tuple([key, value])) for keys that are not strings' },
  set: { schema: 'z.set(...)', why: 'a Set reads back from JSON as {}', instead: 'z.array(...) (new Set(value) in apply)' },
  function: { schema: 'z.function()', why: 'a function has no JSON form', instead: 'data that says what to do (z.enum([...]) or z.string()), with the code in apply' },
  promise: {
    schema: 'z.promise(...)',
    why: 'a promise has no JSON form, and REMIT validates a resume value synchronously',
    instead: 'the schema of the value it resolves to, awaited before resume()',
  },
  file: { schema: 'z.file()', why: 'a File reads back from JSON as {}', instead: 'z.string() for where the file is kept (a URL or a storage key) or its contents' },
};

/** Coerced types: they accept JSON (a string, a number) but give a value without a JSON form. */
const COERCED: Record<string, { schema: string; why: string; instead: string }> = {
  date: { schema: 'z.coerce.date()', why: 'it turns the string or number it accepts into a Date, which reads back from JSON as a string', instead: DATE },
  bigint: { schema: 'z.coerce.bigint()', why: 'it turns the string or number it accepts into a bigint, which has no JSON form', instead: BIGINT },
};

/** The kinds of JSON value: what a pipe's sides are compared by. */
type JsonKind = 'string' | 'number' | 'boolean' | 'null' | 'object' | 'array';

const KIND_OF_TYPE: Record<string, JsonKind> = {
  string: 'string', template_literal: 'string', number: 'number', int: 'number', boolean: 'boolean', null: 'null',
  object: 'object', record: 'object', array: 'array', tuple: 'array',
};

/**
 * A pipe whose last schema gives only kinds of JSON value its first refuses (`z.stringbool()`: a
 * string in, a boolean out; a codec from a string to a number; `z.string().pipe(z.coerce.number())`):
 * a kept value is what the last gives and is given back to the first, so none passes. Null when
 * the kinds are not known on both sides (a transform, a lazy, a custom check) or may meet.
 */
function pipeMismatch(def: SchemaDef, path: Array<string | number>): Unkeepable[] | null {
  const accepted = jsonKinds(def.in, 'in', 0);
  const given = jsonKinds(def.out, 'out', 0);
  if (accepted === null || given === null || [...given].some((kind) => accepted.has(kind))) return null;
  const named = (kinds: Set<JsonKind>) => [...kinds].map((kind) => `a${kind === 'object' || kind === 'array' ? 'n' : ''} ${kind}`).join(' or ');
  return [{
    schema: 'pipe (a codec, z.stringbool(), .pipe())',
    path: [...path],
    why: `what it gives (${named(given)}) its first schema refuses (it takes ${named(accepted)}) when the value is read back`,
    instead: 'a schema whose output it accepts again: the output\'s own type (z.boolean(), z.number()), converting the caller\'s text before resume(), or z.enum(["true", "false"]) converted in apply',
    noValue: false,
    pipe: true,
  }];
}

/**
 * The kinds of JSON value a schema accepts (`in`) or gives (`out`), or null when not known here
 * (a transform, a lazy, an intersection, a custom check, anything not listed: such a pipe is not refused).
 */
function jsonKinds(schema: unknown, role: 'in' | 'out', depth: number): Set<JsonKind> | null {
  const internals = internalsOf(schema);
  const def = internals === undefined ? undefined : read(internals, 'def');
  if (def === undefined || def === null || typeof def.type !== 'string' || depth > MAX_DEPTH) return null;
  const inner = (next: unknown, nextRole: 'in' | 'out' = role) => jsonKinds(next, nextRole, depth + 1);
  const kind = KIND_OF_TYPE[def.type];
  if (kind !== undefined) return role === 'in' && def.coerce === true ? null : new Set([kind]);
  switch (def.type) {
    case 'enum':
    case 'literal': {
      const values = def.type === 'enum' ? Object.values((def as { entries?: object }).entries ?? {}) : def.values;
      if (!Array.isArray(values)) return null;
      const kinds = new Set<JsonKind>();
      for (const value of values) {
        if (value === null) kinds.add('null');
        else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') kinds.add(typeof value as JsonKind);
        else return null;
      }
      return kinds;
    }
    case 'nullable': {
      const kinds = inner(def.innerType);
      return kinds === null ? null : new Set([...kinds, 'null' as const]);
    }
    case 'optional':
    case 'nonoptional':
    case 'readonly':
    case 'default':
    case 'prefault':
      return inner(def.innerType);
    case 'pipe':
      return role === 'in' ? inner(def.in, 'in') : inner(def.out, 'out');
    case 'union': {
      if (!Array.isArray(def.options)) return null;
      const kinds = new Set<JsonKind>();
      for (const option of def.options) {
        const optionKinds = inner(option);
        if (optionKinds === null) return null;
        for (const k of optionKinds) kinds.add(k);
      }
      return kinds;
    }
    default:
      return null;
  }
}

/**
 * A walk's bounds: the schema nodes it visits, and how deeply it nests (wrappers count, so a
 * lazy that makes a new schema at each call ends too). Beyond them a schema may have a kept value.
 */
const MAX_VISITS = 10_000;
const MAX_DEPTH = 64;

class Walk {
  private visits = 0;
  private depth = 0;
  /** The (schema, role) pairs on the walk's stack: a recursive lazy met again may have a kept value. */
  private readonly active = new Map<object, Set<Role>>();

  visit(schema: unknown, role: Role, path: Array<string | number>): Unkeepable[] | null {
    const internals = internalsOf(schema);
    const def = internals === undefined ? undefined : read(internals, 'def');
    if (internals === undefined || def === undefined || def === null || typeof def.type !== 'string') return null;
    if (++this.visits > MAX_VISITS || this.depth >= MAX_DEPTH) return null;
    const key = schema as object;
    let roles = this.active.get(key);
    if (roles?.has(role)) return null;
    if (roles === undefined) this.active.set(key, (roles = new Set()));
    roles.add(role);
    this.depth++;
    try {
      return this.parts(internals, def, def.type, role, path);
    } finally {
      this.depth--;
      roles.delete(role);
      if (roles.size === 0) this.active.delete(key);
    }
  }

  private parts(internals: Internals, def: SchemaDef, type: string, role: Role, path: Array<string | number>): Unkeepable[] | null {
    const here = (found: Omit<Unkeepable, 'path'>): Unkeepable[] => [{ ...found, path: [...path] }];
    switch (type) {
      case 'void':
      case 'undefined':
        // Its output, undefined, is no value in an object's field: only what it accepts counts.
        return role === 'out' ? null : here({ schema: `z.${type}()`, ...NO_VALUE[type]! });
      case 'never':
        return here({ schema: 'z.never()', ...NO_VALUE.never! });
      case 'date':
      case 'bigint':
        if (def.coerce === true) return role === 'in' ? null : here({ ...COERCED[type]!, noValue: false });
        return here({ ...NO_JSON_FORM[type]!, noValue: false });
      case 'nan':
      case 'symbol':
      case 'map':
      case 'set':
      case 'function':
      case 'promise':
      case 'file':
        return here({ ...NO_JSON_FORM[type]!, noValue: false });
      case 'custom': {
        const cls = read(internals, 'bag')?.Class;
        if (typeof cls !== 'function' || jsonMayBeInstanceOf(cls)) return null;
        const name = typeof cls.name === 'string' && cls.name.length > 0 ? cls.name : 'a class';
        return here({
          schema: `z.instanceof(${name})`,
          why: `an instance of ${name} reads back from JSON as a plain object, which z.instanceof(${name}) refuses`,
          instead: `z.object({ ... }) with the fields it needs (a new ${name} in apply)`,
          noValue: false,
        });
      }
      case 'literal':
        return literalParts(def.values, role, path);
      case 'optional':
      case 'nonoptional':
      case 'readonly':
      case 'prefault':
        // optional adds undefined, no JSON value; a prefault's value is parsed like any other.
        return this.visit(def.innerType, role, path);
      case 'default':
        // A kept value is never undefined, so it is its inner schema's; its output may be the default.
        return role === 'out' ? null : this.visit(def.innerType, role, path);
      case 'lazy': {
        let inner: unknown;
        try {
          inner = typeof def.getter === 'function' ? (def.getter as () => unknown)() : undefined;
        } catch {
          return null;
        }
        return this.visit(inner, role, path);
      }
      case 'pipe':
        // A kept value is given back to the first schema (in), and is what the last one gives (out).
        if (role === 'in') return this.visit(def.in, 'in', path);
        if (role === 'out') return this.visit(def.out, 'out', path);
        return this.visit(def.in, 'in', path) ?? this.visit(def.out, 'out', path) ?? pipeMismatch(def, path);
      case 'union': {
        if (!Array.isArray(def.options) || def.options.length === 0) return null;
        const found: Unkeepable[] = [];
        for (const option of def.options) {
          const parts = this.visit(option, role, path);
          if (parts === null) return null;
          found.push(...parts);
        }
        return found;
      }
      case 'intersection':
        // A kept value passes both sides, and what each gives is merged into it: each side keeps its part of it.
        return this.visit(def.left, role, path) ?? this.visit(def.right, role, path);
      case 'object': {
        if (def.shape === null || typeof def.shape !== 'object') return null;
        for (const [key, field] of Object.entries(def.shape as object)) {
          // zod never checks a key named __proto__ (it is no own key of a parsed object).
          if (key === '__proto__') continue;
          const parts = mayBeAbsent(field, role) ? null : this.visit(field, role, [...path, key]);
          if (parts !== null) return parts;
        }
        return null;
      }
      case 'tuple': {
        if (!Array.isArray(def.items)) return null;
        // Only trailing items may be left out: one before a given item is there, if only as undefined.
        let given = def.items.length;
        while (given > 0 && mayBeAbsent(def.items[given - 1], role)) given--;
        for (const [index, item] of def.items.slice(0, given).entries()) {
          const parts = this.visit(item, role, [...path, index]);
          if (parts !== null) return parts;
        }
        return null;
      }
      case 'array':
        // The empty array is kept, unless the schema wants items.
        return minItems(def.checks) > 0 ? this.visit(def.element, role, [...path, 0]) : null;
      case 'record': {
        // A record whose keys are a fixed set (z.enum, z.literal) wants them all; one of any string may be {}.
        const keys = internalsOf(def.keyType) === undefined ? undefined : read(internalsOf(def.keyType)!, 'values');
        if (def.partial === true || !(keys instanceof Set)) return null;
        const first = [...keys].find((key) => (typeof key === 'string' && key !== '__proto__') || typeof key === 'number');
        // A key left out is validated as undefined: a value schema that may take it leaves the record {}.
        if (first === undefined || mayBeAbsent(def.valueType, role) || this.mayTakeUndefined(def.valueType)) return null;
        return this.visit(def.valueType, role, [...path, first as string | number]);
      }
      default:
        return null;
    }
  }

  /**
   * Whether `schema` may accept undefined and give undefined back (conservative: true unless it
   * surely does not). A default or prefault gives something else, a promise nothing synchronously,
   * and z.instanceof refuses it. It counts against the walk's visits: a union of shared options
   * is a tree of 2^depth paths to them (26 levels took 6.5 s before it did).
   */
  private mayTakeUndefined(schema: unknown, depth = 0): boolean {
    const internals = internalsOf(schema);
    const def = internals === undefined ? undefined : read(internals, 'def');
    if (def === undefined || def === null || typeof def.type !== 'string') return true;
    if (++this.visits > MAX_VISITS || depth > MAX_DEPTH) return true;
    if (REFUSE_UNDEFINED.has(def.type)) return false;
    if (def.type === 'custom') return typeof read(internals!, 'bag')?.Class !== 'function';
    if (def.type === 'literal') return !Array.isArray(def.values) || def.values.includes(undefined);
    if (def.type === 'nullable' || def.type === 'readonly') return this.mayTakeUndefined(def.innerType, depth + 1);
    if (def.type === 'union') return !Array.isArray(def.options) || def.options.some((option) => this.mayTakeUndefined(option, depth + 1));
    if (def.type === 'intersection') return this.mayTakeUndefined(def.left, depth + 1) && this.mayTakeUndefined(def.right, depth + 1);
    if (def.type === 'pipe') return this.mayTakeUndefined(def.in, depth + 1);
    if (def.type === 'lazy') {
      try {
        return this.mayTakeUndefined(typeof def.getter === 'function' ? (def.getter as () => unknown)() : undefined, depth + 1);
      } catch {
        return true;
      }
    }
    return true;
  }
}

/**
 * Whether an object's field (a tuple's item, a record's value) may be left out of a value of the
 * role: zod's own `optin` (absent from the input allowed). A kept value may leave out an optional
 * field, not one with a default (its output has the default, which must then be kept).
 */
function mayBeAbsent(field: unknown, role: Role): boolean {
  const internals = internalsOf(field);
  const optin = internals === undefined ? undefined : read(internals, 'optin');
  return role === 'kept' ? optin === 'optional' : optin !== undefined;
}

/** Types that refuse undefined whatever they are given around them (zod's `def.type`). */
const REFUSE_UNDEFINED = new Set([
  'string', 'number', 'int', 'boolean', 'bigint', 'symbol', 'null', 'never', 'date', 'nan', 'object', 'array', 'tuple', 'record',
  'map', 'set', 'enum', 'file', 'function', 'promise', 'template_literal', 'default', 'prefault', 'nonoptional',
]);

/** The fewest items an array schema's checks allow (`.min(n)`, `.nonempty()`, `.length(n)`). */
function minItems(checks: unknown): number {
  let least = 0;
  if (!Array.isArray(checks)) return least;
  for (const check of checks) {
    const def = internalsOf(check)?.def as { check?: unknown; minimum?: unknown; length?: unknown } | undefined;
    if (def?.check === 'min_length' && typeof def.minimum === 'number') least = Math.max(least, def.minimum);
    if (def?.check === 'length_equals' && typeof def.length === 'number') least = Math.max(least, def.length);
  }
  return least;
}

/** A z.literal whose values all lack a JSON form (undefined, a bigint, NaN, an infinity). */
function literalParts(values: unknown, role: Role, path: Array<string | number>): Unkeepable[] | null {
  if (!Array.isArray(values) || values.length === 0) return null;
  const jsonable = (value: unknown) =>
    value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
  if (values.some(jsonable)) return null;
  const shown = values.find((value) => value !== undefined);
  if (shown === undefined) return role === 'out' ? null : [{ schema: 'z.undefined()', path: [...path], ...NO_VALUE.undefined! }];
  const text = typeof shown === 'bigint' ? `${shown}n` : String(shown);
  return [{
    schema: `z.literal(${text})`,
    path: [...path],
    why: typeof shown === 'bigint' ? 'a bigint has no JSON form' : `${text} reads back from JSON as null`,
    instead: typeof shown === 'bigint' ? BIGINT : 'z.literal() of a string, a finite number, a boolean or null',
    noValue: false,
  }];
}

/**
 * Whether some JSON value (a string, number, boolean or null; an array; a plain object) may be
 * `instanceof cls`: with the default instanceof, only when `cls.prototype` is Array.prototype or
 * Object.prototype. A class with its own Symbol.hasInstance may accept anything.
 */
function jsonMayBeInstanceOf(cls: { prototype?: unknown; [Symbol.hasInstance]?: unknown }): boolean {
  try {
    if (cls[Symbol.hasInstance] !== Function.prototype[Symbol.hasInstance]) return true;
    const proto = cls.prototype;
    return proto === Object.prototype || proto === Array.prototype || proto === null || typeof proto !== 'object';
  } catch {
    return true;
  }
}

function at(path: ReadonlyArray<string | number>): string {
  return path.length === 0 ? '' : ` at ${path.join('.')}`;
}

function unique(texts: string[]): string[] {
  return [...new Set(texts)];
}
