/**
 * Damaged summaries (docs/core-api.md, "Summary encoding", decoding rules): a summary a core wrote,
 * then changed — most of all in its interrupt section, where the Rust core keeps the decoded ids
 * as a sorted vector and copies their bytes when nothing changed them — gives the same answer on
 * both cores for `feed` (with no chunk, the rest of the log, the next record) and for `admitFrom`
 * of every interrupt id of the log (and of reserved ids no park of it uses): the same refusal, or the
 * same recovery and summary. Eleven damage kinds: a byte of the interrupt section set or
 * bit-flipped, the count off by -1..+1, an entry dropped (count - 1) or duplicated in place
 * (count + 1), a claim toggled or its position rewritten, the last claim dropped, moved or made up,
 * any byte set, removed or inserted. The decoding rules one by one, each broken alone,
 * are ./summary-rules.test.ts.
 *
 * The directed cases are the two on which the cores disagreed until commit fc54a8a (2026-12-02;
 * the disagreement predates the sorted vector: a PARKED phase whose id the list omits, or lists
 * as claimed, then a claim in the chunk). Such a summary is refused now, by both cores. And a
 * reserved phase id (`node@parkSeq`, not listed in a summary a core writes) listed, or rewritten
 * to name the next seq or another node: refused by both cores.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { EMPTY_SUMMARY, reference, type RecoveryCore } from 'remit/core';
import { modelLogArb } from './arbitraries.js';
import { fedParts, hex, recordBoundaries } from './compare.js';
import { loadCoresUnderTest } from './cores.js';
import { planRequests } from './requests.js';
import { reservedInterruptId } from './reserved.js';
import { scaledRuns, scaleFromEnv } from './property.js';

const cores = await loadCoresUnderTest();
const scale = scaleFromEnv();

const te = new TextEncoder();
const u32 = (b: Uint8Array, at: number) => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
const le = (n: number) => Uint8Array.from([n & 255, (n >>> 8) & 255, (n >>> 16) & 255, (n >>> 24) & 255]);
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, x) => n + x.length, 0));
  let at = 0;
  for (const x of parts) { out.set(x, at); at += x.length; }
  return out;
};

/** Fixed-size fields after the phase tag, per phase (docs/core-api.md): [u32s before the bytes field, has bytes, u32s after]. */
const PHASE_FIELDS: Record<number, [number, boolean, number]> = {
  1: [1, false, 0], 2: [1, true, 1], 3: [1, true, 4], 4: [1, true, 2], 5: [1, true, 2], 6: [1, true, 1], 7: [1, true, 2],
};

interface Layout {
  phaseTag: number;
  /** Where the phase's interrupt id field (u32 length + bytes) starts (PARKED and CLAIMED). */
  phaseIdAt: number;
  countAt: number;
  /** Start of each interrupt entry; `end` is where the entries stop. */
  entries: number[];
  end: number;
}

/**
 * Where the fields are in a summary (null for the empty summary, or when the fields run past its
 * end, as a damaged one's may).
 */
function layoutOf(s: Uint8Array): Layout | null {
  if (s.length === 0) return null;
  let p = 1 + 4 + 4 + 4 + 1 + 1;
  const phaseTag = s[p++]!;
  const bytesField = () => { p += 4 + u32(s, p); };
  const [before, hasBytes, after] = PHASE_FIELDS[phaseTag] ?? [0, false, 0];
  p += 4 * before;
  const phaseIdAt = p;
  if (hasBytes) bytesField();
  p += 4 * after;
  for (let i = 0; i < 4; i++) bytesField();
  p += 16;
  const nodes = u32(s, p);
  p += 4;
  for (let i = 0; i < nodes; i++) {
    if (p >= s.length) return null;
    bytesField();
    p += 2 + 8;
  }
  p += 8;
  const countAt = p;
  const count = u32(s, p);
  p += 4;
  const entries: number[] = [];
  for (let i = 0; i < count; i++) {
    if (p >= s.length) return null;
    entries.push(p);
    bytesField();
    if (s[p++] === 1) p += 8;
  }
  return p > s.length ? null : { phaseTag, phaseIdAt, countAt, entries, end: p };
}

/** The entry listing `id` (its start and the offset of its claimed flag), if listed. */
function entryOf(s: Uint8Array, layout: Layout, id: Uint8Array): { start: number; end: number; flagAt: number } | null {
  for (let i = 0; i < layout.entries.length; i++) {
    const start = layout.entries[i]!;
    const len = u32(s, start);
    if (hex(s.subarray(start + 4, start + 4 + len)) !== hex(id)) continue;
    const flagAt = start + 4 + len;
    return { start, end: layout.entries[i + 1] ?? layout.end, flagAt };
  }
  return null;
}

type Damage = { kind: number; a: number; b: number };
const damageArb: fc.Arbitrary<Damage> = fc.record({ kind: fc.nat(10), a: fc.nat(), b: fc.nat(255) });

function damage(s: Uint8Array, d: Damage): Uint8Array {
  const layout = layoutOf(s);
  if (layout === null) return s;
  const out = s.slice();
  const section = layout.end - layout.countAt;
  const entry = layout.entries.length > 0 ? layout.entries[d.a % layout.entries.length]! : -1;
  const entryEnd = entry < 0 ? -1 : (layout.entries[layout.entries.indexOf(entry) + 1] ?? layout.end);
  const flagAt = entry < 0 ? -1 : entry + 4 + u32(s, entry);
  switch (d.kind) {
    case 0: out[layout.countAt + (d.a % section)] = d.b; return out;
    case 1: out[layout.countAt + (d.a % section)]! ^= 1 << (d.b % 8); return out;
    case 2: out.set(le(layout.entries.length + (d.b % 3) - 1), layout.countAt); return out;
    case 3: // drop an entry, count - 1
      if (entry < 0) return out;
      return concat(s.subarray(0, layout.countAt), le(layout.entries.length - 1), s.subarray(layout.countAt + 4, entry), s.subarray(entryEnd));
    case 4: // claim an unclaimed entry, or unclaim a claimed one
      if (entry < 0) return out;
      if (s[flagAt] === 1) return concat(s.subarray(0, flagAt), Uint8Array.of(0), s.subarray(flagAt + 9));
      return concat(s.subarray(0, flagAt), Uint8Array.of(1), le(d.b), le(d.a), s.subarray(flagAt + 1));
    case 5: // rewrite a claim position
      if (entry >= 0 && s[flagAt] === 1) out.set(le(d.a ^ d.b), flagAt + 1 + (d.b % 2) * 4);
      return out;
    case 6: out[d.a % s.length] = d.b; return out;
    case 7: { const at = d.a % (s.length + 1); return concat(s.subarray(0, at), s.subarray(at + 1)); }
    case 10: { // the last claim (right after the entries): dropped, moved, or made up (an id `i@<a>` at (a + 1, b))
      const at = layout.end;
      if (s[at] === 1) {
        const fieldsEnd = at + 1 + 4 + u32(s, at + 1) + 8;
        if (fieldsEnd > s.length) return out; // an earlier damage cut the fields short
        if (d.b % 2 === 0) return concat(s.subarray(0, at), Uint8Array.of(0), s.subarray(fieldsEnd));
        out.set(le(d.a), fieldsEnd - 8 + (d.b % 4 < 2 ? 0 : 4));
        return out;
      }
      if (s[at] !== 0) return out;
      const id = te.encode(`i@${d.a % 1000}`);
      return concat(s.subarray(0, at), Uint8Array.of(1), le(id.length), id, le((d.a % 1000) + 1), le(d.b), s.subarray(at + 1));
    }
    case 9: // duplicate an entry in place (the copy right after it), count + 1: ids no longer strictly ascending
      if (entry < 0) return out;
      return concat(s.subarray(0, layout.countAt), le(layout.entries.length + 1), s.subarray(layout.countAt + 4, entryEnd), s.subarray(entry, entryEnd), s.subarray(entryEnd));
    default: { const at = d.a % (s.length + 1); return concat(s.subarray(0, at), Uint8Array.of(d.b), s.subarray(at)); }
  }
}

/** Both cores' answers to one summary, for the chunks and requests given; a message when they differ. */
function disagreement(wasm: RecoveryCore, summary: Uint8Array, chunks: Uint8Array[], requests: Uint8Array[]): string | null {
  for (const chunk of chunks) {
    const a = wasm.feedEncoded(summary, chunk);
    const b = reference.feedEncoded(summary, chunk);
    if (hex(a) !== hex(b)) return `feed\nsummary ${hex(summary)}\nchunk ${hex(chunk)}\nwasm ${hex(a)}\nreference ${hex(b)}`;
  }
  for (const request of requests) {
    const a = wasm.admitFromEncoded(summary, request);
    const b = reference.admitFromEncoded(summary, request);
    if (hex(a) !== hex(b)) return `admitFrom\nsummary ${hex(summary)}\nrequest ${hex(request)}\nwasm ${hex(a)}\nreference ${hex(b)}`;
  }
  return null;
}

/** RESUME of every id the log names and of reserved ids no park of it uses (NEEDS_LOG from a summary below the head). */
function requestsOf(log: Uint8Array): Uint8Array[] {
  const plan = planRequests(log);
  return [...plan.idResumes, ...plan.reservedResumes];
}

const compareBytes = (x: Uint8Array, y: Uint8Array): number => {
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
};

/** The summaries of a log at record boundaries, each with the chunks that can follow it. */
function summariesOf(log: Uint8Array): { summary: Uint8Array; chunks: Uint8Array[] }[] {
  const bounds = recordBoundaries(log);
  const out: { summary: Uint8Array; chunks: Uint8Array[] }[] = [];
  for (let i = 1; i < bounds.length; i++) {
    const parts = fedParts(reference.feedEncoded(EMPTY_SUMMARY, log.subarray(0, bounds[i]!)), 0);
    if (parts === null || parts.summary.length === 0) continue;
    const next = bounds[i + 1] ?? log.length;
    out.push({ summary: parts.summary.slice(), chunks: [new Uint8Array(0), log.subarray(parts.next), log.subarray(parts.next, next)] });
  }
  return out;
}

describe.skipIf(cores.wasm === null)('damaged summaries: wasm ≡ reference', () => {
  it('every damage of the interrupt section and elsewhere, fed and admitted', () => {
    let withIds = 0, duplicated = 0;
    fc.assert(
      fc.property(modelLogArb(40), fc.array(damageArb, { minLength: 1, maxLength: 3 }), fc.nat(), (c, damages, pick) => {
        const log = c.logs[c.logs.length - 1]!;
        const requests = requestsOf(log);
        const all = summariesOf(log);
        if (all.length === 0) return;
        for (const { summary, chunks } of [all[pick % all.length]!, all[all.length - 1]!]) {
          if ((layoutOf(summary)?.entries.length ?? 0) > 0) {
            withIds++;
            if (damages[0]!.kind === 9) duplicated++;
          }
          const damaged = damages.reduce(damage, summary);
          const why = disagreement(cores.wasm!, summary, chunks, requests) ?? disagreement(cores.wasm!, damaged, chunks, requests);
          if (why !== null) throw new Error(`${c.source}: ${why}`);
        }
      }),
      { numRuns: scaledRuns(1500, scale) },
    );
    expect(withIds).toBeGreaterThan(0);
    expect(duplicated, 'an entry duplicated in place (the first damage on a summary listing ids)').toBeGreaterThan(0);
  });

  it('a PARKED or CLAIMED phase the interrupt list does not agree with is refused by both cores', () => {
    const seen = { parkedOmitted: 0, parkedClaimed: 0, claimedMoved: 0, reservedListed: 0, reservedOtherSeq: 0, reservedOtherNode: 0 };
    for (const c of fc.sample(modelLogArb(40), { numRuns: 300, seed: 20261202 })) {
      const log = c.logs[c.logs.length - 1]!;
      const requests = requestsOf(log);
      for (const { summary, chunks } of summariesOf(log)) {
        const layout = layoutOf(summary)!;
        if (layout.phaseTag !== 6 && layout.phaseTag !== 7) continue;
        const idLen = u32(summary, layout.phaseIdAt);
        const id = summary.subarray(layout.phaseIdAt + 4, layout.phaseIdAt + 4 + idLen);
        const entry = entryOf(summary, layout, id);
        const variants: [keyof typeof seen, Uint8Array][] = [];
        const reserved = reservedInterruptId(id);
        if (reserved !== null) {
          // A reserved phase id (`node@parkSeq`, what the shell writes) is not listed; listed, or
          // naming another seq or node, the summary is refused.
          expect(entry, 'a core-written summary does not list a reserved phase id').toBeNull();
          const listed = layout.phaseTag === 6 ? Uint8Array.of(0) : concat(Uint8Array.of(1), summary.subarray(layout.phaseIdAt + 4 + idLen, layout.phaseIdAt + 4 + idLen + 8));
          const before = layout.entries.find((e) => compareBytes(summary.subarray(e + 4, e + 4 + u32(summary, e)), id) > 0) ?? layout.end;
          variants.push(['reservedListed', concat(
            summary.subarray(0, layout.countAt), le(layout.entries.length + 1), summary.subarray(layout.countAt + 4, before),
            le(id.length), id, listed, summary.subarray(before),
          )]);
          const withPhaseId = (other: Uint8Array) => concat(summary.subarray(0, layout.phaseIdAt), le(other.length), other, summary.subarray(layout.phaseIdAt + 4 + idLen));
          variants.push(['reservedOtherSeq', withPhaseId(concat(reserved.name, te.encode(`@${reserved.seq + 1}`)))]);
          variants.push(['reservedOtherNode', withPhaseId(concat(reserved.name, te.encode(`x@${reserved.seq}`)))]);
          for (const [name, damaged] of variants) {
            seen[name]++;
            for (const core of [cores.wasm!, reference]) {
              for (const chunk of chunks) expect(core.feedEncoded(damaged, chunk)[0], `${core.name} feed of ${name}`).toBe(0);
            }
            expect(disagreement(cores.wasm!, damaged, chunks, requests)).toBeNull();
          }
          continue;
        }
        expect(entry, 'a core-written summary lists a phase id that is not reserved').not.toBeNull();
        if (entry === null) continue;
        variants.push(['parkedOmitted', concat(summary.subarray(0, layout.countAt), le(layout.entries.length - 1), summary.subarray(layout.countAt + 4, entry.start), summary.subarray(entry.end))]);
        if (layout.phaseTag === 6) {
          variants.push(['parkedClaimed', concat(summary.subarray(0, entry.flagAt), Uint8Array.of(1, 5, 0, 0, 0, 6, 0, 0, 0), summary.subarray(entry.flagAt + 1))]);
        } else {
          const moved = summary.slice();
          moved.set(le(u32(summary, entry.flagAt + 1) + 1), entry.flagAt + 1);
          variants.push(['claimedMoved', moved]);
        }
        for (const [name, damaged] of variants) {
          if (name !== 'parkedOmitted' || layout.phaseTag === 6) seen[name]++;
          for (const core of [cores.wasm!, reference]) {
            for (const chunk of chunks) expect(core.feedEncoded(damaged, chunk)[0], `${core.name} feed of ${name}`).toBe(0);
          }
          expect(disagreement(cores.wasm!, damaged, chunks, requests)).toBeNull();
        }
      }
    }
    for (const [name, count] of Object.entries(seen)) expect(count, name).toBeGreaterThan(0);
  });
});
