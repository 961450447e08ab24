/**
 * The shared catalogue (conformance/catalogue.json): fault-point names, fault kinds, concurrency
 * shape, the reference workflow's rules and its schemas as JSON Schema. The TypeScript harness and
 * adapters read it here; the Python adapters read the same file (remit_conformance/catalogue.py).
 * Neither side keeps its own copy of the names. The TypeScript constants that need literal types
 * (fault kinds, node names) are checked against the file when this module loads, and
 * catalogue.test.ts checks the zod schemas and the Python side against it.
 */
import fs from 'node:fs';
import { z } from 'zod';

export const CATALOGUE_PATH = new URL('../catalogue.json', import.meta.url);

const PointSchema = z.object({
  name: z.string().regex(/^(before-commit|after-commit|inside-pure|in-handler-before-effect|in-handler-after-effect):[A-Za-z_@]+$/),
  phase: z.enum(['start', 'resume', 'fork']),
  place: z.enum(['commit', 'code']),
  description: z.string().min(1),
});

export const CatalogueSchema = z.object({
  format: z.literal('remit-conformance-catalogue/1'),
  about: z.string(),
  faultKinds: z.array(z.string()).min(1),
  faultKindsByPlace: z.object({ commit: z.array(z.string()), code: z.array(z.string()) }),
  faultPoints: z.array(PointSchema).min(1),
  concurrency: z.object({ ks: z.array(z.number().int().min(2)), modes: z.array(z.string()), values: z.array(z.string()) }),
  workflow: z.object({
    name: z.string(),
    nodes: z.array(z.object({ name: z.string(), kind: z.enum(['pure', 'effect', 'interrupt']) })),
    effectNodes: z.array(z.string()),
    pureNodes: z.array(z.string()),
    interruptNode: z.string(),
    gatedEffectNode: z.string(),
    stateFields: z.array(z.string()),
    feeRule: z.object({ divisor: z.number().int().min(1), minimumFeeCents: z.number().int().min(0), about: z.string() }),
    chargeIdFormat: z.string(),
    notificationIdFormat: z.string(),
    notificationDecisionWords: z.object({ approved: z.string(), rejected: z.string() }),
    invalidStateAmountCents: z.number().int(),
    invalidResumeValue: z.record(z.string(), z.unknown()),
    invalidResumeField: z.string(),
    invalidStateField: z.string(),
  }),
  schemas: z.object({ approvalValue: z.unknown(), refundInput: z.unknown(), refundState: z.unknown() }),
});
export type Catalogue = z.infer<typeof CatalogueSchema>;

function load(): Catalogue {
  const parsed = CatalogueSchema.safeParse(JSON.parse(fs.readFileSync(CATALOGUE_PATH, 'utf8')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`conformance/catalogue.json is malformed at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
  }
  return parsed.data;
}

export const CATALOGUE: Catalogue = load();

/** A TypeScript constant with literal types must equal the catalogue's list: a drift is a bug. */
export function assertSameList(what: string, typed: readonly unknown[], fromCatalogue: readonly unknown[]): void {
  if (JSON.stringify(typed) !== JSON.stringify(fromCatalogue)) {
    throw new Error(`bug: ${what} in TypeScript (${JSON.stringify(typed)}) differs from conformance/catalogue.json (${JSON.stringify(fromCatalogue)})`);
  }
}

/** Fill a format like "ch_{orderId}_{refundCents}"; a placeholder without a value is a bug. */
export function fillFormat(format: string, values: Record<string, string | number>): string {
  return format.replace(/\{(\w+)\}/g, (_m, key: string) => {
    const v = values[key];
    if (v === undefined) throw new Error(`bug: catalogue format "${format}" needs "${key}"`);
    return String(v);
  });
}
