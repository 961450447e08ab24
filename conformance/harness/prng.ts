/**
 * A small seeded generator (sfc32 seeded through splitmix32). Everything random in a scenario comes
 * from one of these, so a scenario is reproducible from its seed alone. Not for cryptography.
 */
export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    if (!Number.isSafeInteger(seed) || seed < 0) {
      throw new RangeError(`seed must be a non-negative safe integer, got ${seed}`);
    }
    let s = seed >>> 0;
    const splitmix = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    // The high part of large seeds is folded in so that seeds above 2^32 differ.
    s = (s ^ Math.floor(seed / 0x1_0000_0000)) >>> 0;
    this.a = splitmix();
    this.b = splitmix();
    this.c = splitmix();
    this.d = splitmix();
    for (let i = 0; i < 12; i++) this.nextU32();
  }

  nextU32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t >>> 0;
  }

  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    if (!(Number.isInteger(min) && Number.isInteger(max) && min <= max)) {
      throw new RangeError(`bad integer range [${min}, ${max}]`);
    }
    const span = max - min + 1;
    return min + (this.nextU32() % span);
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[this.int(0, items.length - 1)] as T;
  }

  hex(chars: number): string {
    let out = '';
    while (out.length < chars) out += this.nextU32().toString(16).padStart(8, '0');
    return out.slice(0, chars);
  }

  /** An independent generator for a named sub-stream, so adding draws elsewhere changes nothing here. */
  fork(label: string): Prng {
    let h = 0x811c9dc5;
    for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
    return new Prng((this.nextU32() ^ h) >>> 0);
  }
}

/** A stable 32-bit hash of a string (FNV-1a), to derive per-cell seeds from one run seed. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h >>> 0;
}
