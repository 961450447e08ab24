/**
 * Counting wrappers for the step-cost and resume suites, through the public API only: createRemit
 * takes any object as its core and any Store as its store, so a Proxy around the real one sees
 * every call the sequencer makes without the library knowing.
 *
 * - countingCore: adds up the byte length of every byte-array argument (a Uint8Array or any other
 *   ArrayBuffer view, also inside an array argument) of every method call, whatever the methods
 *   are called: it keeps counting when methods are added to the core interface. An object a method
 *   returns that has methods of its own (a handle, e.g. an incremental recovery state) is wrapped
 *   the same way, so bytes fed through a handle count too. Calls a method makes on its own object
 *   go to the unwrapped target, so nothing is counted twice.
 * - countingStore: counts the calls of each store method (append and fork are the durable commits).
 */

export interface ByteCounter {
  /** Bytes handed to the core, over all calls. */
  bytes: number;
  /** Calls per method name (handle methods as `handle.<name>`). */
  calls: Record<string, number>;
}

export function newByteCounter(): ByteCounter {
  return { bytes: 0, calls: {} };
}

function bytesIn(value: unknown): number {
  if (ArrayBuffer.isView(value)) return value.byteLength;
  if (Array.isArray(value)) {
    let n = 0;
    for (const v of value) if (ArrayBuffer.isView(v)) n += v.byteLength;
    return n;
  }
  return 0;
}

const BUILT_INS = [Promise, Map, Set, WeakMap, Date, RegExp, Error, ArrayBuffer];

/** True when `value` is an object with at least one method (own or inherited, below Object.prototype). */
function hasMethods(value: unknown): value is object {
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value) || Array.isArray(value)) return false;
  if (BUILT_INS.some((c) => value instanceof c)) return false;
  for (let o: object | null = value; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const key of Object.getOwnPropertyNames(o)) {
      if (key === 'constructor') continue;
      const d = Object.getOwnPropertyDescriptor(o, key);
      if (d && typeof d.value === 'function') return true;
    }
  }
  return false;
}

/** Wrapped handles, so a handle passed back into the core arrives as the object the core made. */
const targets = new WeakMap<object, object>();
const unwrap = (a: unknown): unknown => (a !== null && typeof a === 'object' ? targets.get(a) ?? a : a);

function wrap<T extends object>(target: T, counter: ByteCounter, prefix: string): T {
  const proxy = new Proxy(target, {
    get(obj, key, receiver) {
      const value = Reflect.get(obj, key, receiver);
      if (typeof value !== 'function' || typeof key === 'symbol') return value;
      const name = `${prefix}${key}`;
      return function counted(this: unknown, ...args: unknown[]) {
        for (const a of args) counter.bytes += bytesIn(a);
        counter.calls[name] = (counter.calls[name] ?? 0) + 1;
        const out = Reflect.apply(value as (...a: unknown[]) => unknown, obj, args.map(unwrap));
        return hasMethods(out) ? wrap(out, counter, 'handle.') : out;
      };
    },
  });
  targets.set(proxy, target);
  return proxy;
}

export function countingCore<T extends object>(core: T, counter: ByteCounter): T {
  return wrap(core, counter, '');
}

export interface CallCounter {
  calls: Record<string, number>;
}

export function countingStore<T extends object>(store: T, counter: CallCounter): T {
  return new Proxy(store, {
    get(obj, key, receiver) {
      const value = Reflect.get(obj, key, receiver);
      if (typeof value !== 'function' || typeof key === 'symbol') return value;
      return (...args: unknown[]) => {
        counter.calls[key] = (counter.calls[key] ?? 0) + 1;
        return Reflect.apply(value as (...a: unknown[]) => unknown, obj, args);
      };
    },
  });
}
