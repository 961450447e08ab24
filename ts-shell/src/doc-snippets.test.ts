/**
 * The JavaScript and TypeScript blocks of the Markdown users copy from (README.md, docs/*.md and
 * the READMEs under ts-shell/, wasm/ and examples/) are tried as a user would try them, so a
 * snippet that drifts from the code fails here:
 *
 * - every ```js / ```ts block is type-checked under `strict` against the package's entry points
 *   (`remit`, `remit/core`, `remit/testing`, `remit/postgres`: inside the repository they resolve
 *   to the sources), JavaScript with checkJs (implicit `any`s allowed: a JavaScript user writes no
 *   annotations), and then run, all of them in one child process, each from a folder of its own;
 * - a comment after `console.log(...)` on its line is the output it claims (whitespace-insensitive,
 *   `…` standing for anything), and `expr; // => value` claims the value of `expr` as Node prints
 *   it: each claim is checked when the snippet runs, and must be reached;
 * - a block that is not a whole program says so in an HTML comment on the line before its fence:
 *   `<!-- snippet: fragment of <context> -->` (checked and run after the prelude of that name in
 *   CONTEXTS below: what the text around the block says is there), `<!-- snippet: typecheck --
 *   <reason> -->` (type-checked, not run, for the reason given) or `<!-- snippet: copy of <path>
 *   -->` (the block is that file's declarations, line for line, its comment lines left out);
 * - code importing the library in a block labelled otherwise, or not fenced, is refused.
 */

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../', import.meta.url));

/** The refund example's workflow over fake outside systems (a prelude's part). */
const REFUND_WITH_FAKES = `import { createRefundWorkflow } from '@remit/examples/refund/workflow.js';
const refund = createRefundWorkflow({
  payments: { refund: async (req) => ({ chargeId: \`ch-\${req.idempotencyKey}\` }) },
  notifier: { send: async (req) => ({ messageId: \`msg-\${req.idempotencyKey}\` }) },
});
`;

/** The preludes fragments are checked and run after. Each says what the text around its blocks assumes. */
const CONTEXTS: Record<string, { lang: 'js' | 'ts'; prelude: string; files?: Record<string, string> }> = {
  // docs/guide.md, "Defining a workflow": the state schema, the policy and the outside systems of examples/refund/.
  'refund-deps': {
    lang: 'ts',
    prelude: `
import { RefundState, refundPolicy } from '@remit/examples/refund/workflow.js';
const policy = (s: RefundState) => refundPolicy(s.amountCents, s.reason);
const payments = { refund: async (req: { orderId: string; amountCents: number; idempotencyKey: string }) => ({ chargeId: \`ch-\${req.idempotencyKey}\` }) };
const notifier = { send: async (req: { to: string; orderId: string; idempotencyKey: string }) => ({ messageId: \`msg-\${req.idempotencyKey}\` }) };
`,
  },
  // docs/guide.md, "Running": the refund workflow defined above, a store and an input.
  'refund-run': {
    lang: 'ts',
    prelude: `
import { openMemoryStore } from 'remit';
${REFUND_WITH_FAKES}const store = openMemoryStore();
const input = { orderId: 'o-1042', customerEmail: 'ada@example.com', amountCents: 1250, reason: 'damaged' as const };
`,
  },
  // docs/errors.md: a REMIT instance with a parked run, and a resume value (here one its schema refuses).
  'resume-call': {
    lang: 'ts',
    prelude: `
import { createRemit, openMemoryStore } from 'remit';
${REFUND_WITH_FAKES}const remit = await createRemit({ store: openMemoryStore(), workflows: [refund] });
const parked = await remit.start(refund, { orderId: 'o-1', customerEmail: 'ada@example.com', amountCents: 1250, reason: 'damaged' });
const runId = parked.runId;
const interruptId = parked.interrupt!.id;
const value: unknown = { approved: 'yes' };
`,
  },
  // docs/guide.md, "Checking your own workflow": a test file beside the user's factory (./refund.js),
  // with fakes of the outside systems.
  'check-workflow': {
    lang: 'js',
    files: { 'refund.ts': "export { createRefundWorkflow } from '@remit/examples/refund/workflow.js';\n" },
    prelude: `
const fakePayments = { refund: async (req) => ({ chargeId: \`ch-\${req.idempotencyKey}\` }) };
const fakeNotifier = { send: async (req) => ({ messageId: \`msg-\${req.idempotencyKey}\` }) };
`,
  },
};

type Marker =
  | { kind: 'program' }
  | { kind: 'fragment'; context: string }
  | { kind: 'typecheck'; reason: string }
  | { kind: 'copy'; path: string };

interface Snippet {
  id: string;
  /** file:line of the block's first line of code. */
  where: string;
  firstLine: number;
  lang: 'js' | 'ts';
  code: string;
  marker: Marker;
}

/** README.md, docs/*.md, and every README.md under ts-shell/, wasm/ and examples/. */
function markdownFiles(root: string): string[] {
  const found = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      if (['node_modules', 'dist', 'pkg', 'build', 'target'].includes(entry.name)) continue;
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name === 'README.md') found.push(path);
    }
  };
  for (const dir of ['ts-shell', 'wasm', 'examples']) walk(dir);
  return found;
}

const LANGS: Record<string, 'js' | 'ts'> = { js: 'js', javascript: 'js', mjs: 'js', ts: 'ts', typescript: 'ts' };
const LIBRARY_IMPORT = /(from\s+|import\s*\(\s*|require\s*\(\s*)['"]remit(\/[\w/-]+)?['"]/;

function parseMarker(text: string): Marker | string {
  let m: RegExpExecArray | null;
  if ((m = /^fragment of ([\w-]+)$/.exec(text))) return CONTEXTS[m[1]!] ? { kind: 'fragment', context: m[1]! } : `no context named "${m[1]}" (known: ${Object.keys(CONTEXTS).join(', ')})`;
  if ((m = /^typecheck -- (\S.*)$/.exec(text))) return { kind: 'typecheck', reason: m[1]! };
  if ((m = /^copy of (\S+)$/.exec(text))) return { kind: 'copy', path: m[1]! };
  return `unknown snippet marker "${text}" (fragment of <context>, typecheck -- <reason>, copy of <path>)`;
}

/** The JS/TS blocks of one Markdown text, and what is wrong with its markup (a bad marker, library code not in a js/ts block). */
function extractSnippets(file: string, text: string): { snippets: Snippet[]; problems: string[] } {
  const lines = text.split('\n');
  const snippets: Snippet[] = [];
  const problems: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i]!);
    if (!open) {
      if (/^( {4}|\t)/.test(lines[i]!) && LIBRARY_IMPORT.test(lines[i]!)) problems.push(`${file}:${i + 1}: code importing the library outside a js or ts block`);
      continue;
    }
    const fence = open[2]!;
    let end = i + 1;
    while (end < lines.length && !lines[end]!.trimStart().startsWith(fence)) end++;
    const body = lines.slice(i + 1, end);
    const info = open[3]!.toLowerCase();
    const markerText = /^\s*<!--\s*snippet:\s*(.*?)\s*-->\s*$/.exec(lines[i - 1] ?? '')?.[1];
    const lang = LANGS[info];
    if (lang === undefined) {
      if (markerText !== undefined) problems.push(`${file}:${i}: a snippet marker before a block that is not js or ts`);
      if (body.some((l) => LIBRARY_IMPORT.test(l))) problems.push(`${file}:${i + 1}: code importing the library in a block labelled "${info}": label it js or ts`);
    } else {
      const marker = markerText === undefined ? { kind: 'program' as const } : parseMarker(markerText);
      if (typeof marker === 'string') problems.push(`${file}:${i}: ${marker}`);
      else if (marker.kind === 'fragment' && CONTEXTS[marker.context]!.lang !== lang) problems.push(`${file}:${i}: context ${marker.context} is ${CONTEXTS[marker.context]!.lang}, the block ${lang}`);
      else snippets.push({ id: `s${snippets.length}`, where: `${file}:${i + 2}`, firstLine: i + 2, lang, code: body.join('\n'), marker });
    }
    i = end;
  }
  return { snippets, problems };
}

// ------------------------------------------------------------------ claims

const PRINTED = /^(\s*)console\.log\((.*)\);?\s*\/\/\s*(\S.*?)\s*$/;
const VALUE = /^(\s*)([^\s/].*?);?\s*\/\/\s*=>\s*(\S.*?)\s*$/;

/** The snippet as it is run: each claimed output or value goes through __snippetClaim, which records what was printed. */
function withClaims(code: string, where: (line: number) => string): { code: string; claims: string[] } {
  const claims: string[] = [];
  const out = code.split('\n').map((line, n) => {
    let m: RegExpExecArray | null;
    if ((m = PRINTED.exec(line))) {
      claims.push(where(n));
      return `${m[1]}__snippetClaim(${JSON.stringify(where(n))}, 'printed', ${JSON.stringify(m[3])}, ${m[2]});`;
    }
    if ((m = VALUE.exec(line))) {
      claims.push(where(n));
      return `${m[1]}__snippetClaim(${JSON.stringify(where(n))}, 'value', ${JSON.stringify(m[3])}, (${m[2]}));`;
    }
    return line;
  });
  return { code: out.join('\n'), claims };
}

const normalize = (s: string): string => s.replace(/\s+/g, ' ').trim();
function claimHolds(claim: string, printed: string): boolean {
  const pattern = normalize(claim).split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[\\s\\S]*?');
  return new RegExp(`^${pattern}$`).test(normalize(printed));
}

const RUNNER = `
import { format, inspect } from 'node:util';
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
const [listPath, resultsPath] = process.argv.slice(2);
const results = {};
let current;
globalThis.__snippetClaim = (where, kind, claim, ...values) => {
  results[current].claims.push({ where, claim, printed: kind === 'printed' ? format(...values) : inspect(values[0]) });
};
process.on('unhandledRejection', (e) => { results[current]?.errors.push(String(e?.stack ?? e)); });
for (const s of JSON.parse(readFileSync(listPath, 'utf8'))) {
  current = s.id;
  results[current] = { claims: [], errors: [] };
  process.chdir(s.dir);
  try { await import(pathToFileURL(s.file).href); } catch (e) { results[current].errors.push(String(e?.stack ?? e)); }
}
writeFileSync(resultsPath, JSON.stringify(results));
process.exit(0);
`;

// ------------------------------------------------------------------ the check

interface Outcome { typeErrors: string[]; runErrors: string[]; claimProblems: string[]; ran: boolean }

function typeCheck(files: { path: string; preludeLines: number; snippet: Snippet }[]): Map<string, string[]> {
  const program = ts.createProgram(files.map((f) => f.path), {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
    lib: ['lib.es2022.d.ts'],
    allowJs: true,
    checkJs: true,
    customConditions: ['remit-source'],
  });
  const errors = new Map<string, string[]>();
  for (const f of files) {
    const source = program.getSourceFile(f.path);
    const found: string[] = [];
    if (!source) found.push('not loaded by the compiler');
    else {
      for (const d of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
        if (f.snippet.lang === 'js' && d.code >= 7000 && d.code < 8000) continue; // implicit any: JavaScript has no annotations
        const line = source.getLineAndCharacterOfPosition(d.start ?? 0).line;
        const at = line < f.preludeLines ? `its context, line ${line + 1}` : `${f.snippet.where.replace(/:\d+$/, '')}:${f.snippet.firstLine + line - f.preludeLines}`;
        found.push(`${at}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
      }
    }
    errors.set(f.snippet.id, found);
  }
  return errors;
}

/** Type-checks and runs every snippet (one compiler program, one child process). */
function checkSnippets(snippets: Snippet[], workDir: string): Map<string, Outcome> {
  mkdirSync(workDir, { recursive: true });
  symlinkSync(join(repo, 'node_modules'), join(workDir, 'node_modules'), 'dir');
  writeFileSync(join(workDir, 'package.json'), '{ "type": "module" }\n');
  const toCheck: { path: string; preludeLines: number; snippet: Snippet }[] = [];
  const toRun: { id: string; dir: string; file: string }[] = [];
  const claimed = new Map<string, string[]>();
  const outcomes = new Map<string, Outcome>();
  for (const s of snippets) {
    outcomes.set(s.id, { typeErrors: [], runErrors: [], claimProblems: [], ran: false });
    if (s.marker.kind === 'copy') {
      const path = join(repo, s.marker.path);
      const outcome = outcomes.get(s.id)!;
      if (!existsSync(path)) outcome.typeErrors.push(`${s.marker.path} is missing (npm run setup builds it)`);
      else {
        const declared = readFileSync(path, 'utf8').split('\n').map((l) => l.trimEnd()).filter((l) => l !== '' && !l.startsWith('//'));
        const shown = s.code.split('\n').map((l) => l.trimEnd()).filter((l) => l !== '');
        if (JSON.stringify(declared) !== JSON.stringify(shown)) outcome.typeErrors.push(`${s.where}: not ${s.marker.path} as it is:\n${declared.join('\n')}`);
      }
      continue;
    }
    const dir = join(workDir, s.id);
    mkdirSync(dir);
    const context = s.marker.kind === 'fragment' ? CONTEXTS[s.marker.context]! : undefined;
    for (const [name, content] of Object.entries(context?.files ?? {})) writeFileSync(join(dir, name), content);
    const prelude = context ? `${context.prelude.trim()}\n` : '';
    const preludeLines = prelude === '' ? 0 : prelude.split('\n').length - 1;
    const ext = s.lang === 'ts' ? 'ts' : 'mjs';
    const path = join(dir, `snippet.${ext}`);
    writeFileSync(path, `${prelude}${s.code}\nexport {};\n`);
    toCheck.push({ path, preludeLines, snippet: s });
    if (s.marker.kind === 'typecheck') continue;
    const run = withClaims(s.code, (n) => `${s.where.replace(/:\d+$/, '')}:${s.firstLine + n}`);
    const runPath = join(dir, `snippet.run.${ext}`);
    writeFileSync(runPath, `${prelude}${run.code}\nexport {};\n`);
    claimed.set(s.id, run.claims);
    toRun.push({ id: s.id, dir, file: runPath });
  }
  for (const [id, errors] of typeCheck(toCheck)) outcomes.get(id)!.typeErrors.push(...errors);

  const listPath = join(workDir, 'run-list.json');
  const resultsPath = join(workDir, 'run-results.json');
  writeFileSync(listPath, JSON.stringify(toRun));
  writeFileSync(join(workDir, 'runner.mjs'), RUNNER);
  const tsxLoaderUrl = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST')));
  execFileSync(process.execPath, ['--conditions=remit-source', '--import', tsxLoaderUrl, join(workDir, 'runner.mjs'), listPath, resultsPath], {
    cwd: workDir, env, encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'], timeout: 60_000,
  });
  const results = JSON.parse(readFileSync(resultsPath, 'utf8')) as Record<string, { claims: { where: string; claim: string; printed: string }[]; errors: string[] }>;
  for (const { id } of toRun) {
    const outcome = outcomes.get(id)!;
    const result = results[id];
    if (!result) { outcome.runErrors.push('not run'); continue; }
    outcome.ran = true;
    outcome.runErrors.push(...result.errors);
    for (const c of result.claims) {
      if (!claimHolds(c.claim, c.printed)) outcome.claimProblems.push(`${c.where}: claims ${c.claim}, prints ${normalize(c.printed)}`);
    }
    for (const where of claimed.get(id) ?? []) {
      if (!result.claims.some((c) => c.where === where)) outcome.claimProblems.push(`${where}: the claim was never reached`);
    }
  }
  return outcomes;
}

// ------------------------------------------------------------------ the tests

const all = markdownFiles(repo).map((file) => extractSnippets(file, readFileSync(join(repo, file), 'utf8')));
const snippets = all.flatMap((a, n) => a.snippets.map((s) => ({ ...s, id: `f${n}${s.id}` })));
const workDir = mkdtempSync(join(tmpdir(), 'remit-doc-snippets-'));
let outcomes: Map<string, Outcome>;
beforeAll(() => { outcomes = checkSnippets(snippets, join(workDir, 'docs')); });
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe('the code blocks of the documentation', () => {
  it('are marked as they are: a marker names a known context, a reason or a file; library code is in js or ts blocks', () => {
    expect(all.flatMap((a) => a.problems)).toEqual([]);
    expect(snippets.length).toBeGreaterThan(5);
  });

  for (const s of snippets) {
    const how = s.marker.kind === 'program' ? 'type-checks and runs'
      : s.marker.kind === 'fragment' ? `type-checks and runs after the context ${s.marker.context}`
      : s.marker.kind === 'typecheck' ? `type-checks (not run: ${s.marker.reason})`
      : `is ${s.marker.path} as it is`;
    it(`${s.where} ${how}`, () => {
      const outcome = outcomes.get(s.id)!;
      expect(outcome.typeErrors).toEqual([]);
      expect(outcome.runErrors).toEqual([]);
      expect(outcome.claimProblems).toEqual([]);
      if (s.marker.kind === 'program' || s.marker.kind === 'fragment') expect(outcome.ran).toBe(true);
    });
  }
});

describe('the checker itself', () => {
  it('refuses a wrong import, a wrong option, a wrong output claim, an unknown marker and library code in an unlabelled block', () => {
    const text = [
      '```ts', "import { createRemitt } from 'remit';", '```',
      '```js', "import { createRemit, openMemoryStore } from 'remit';", 'await createRemit({ store: openMemoryStore(), workflow: [] });', '```',
      '```js', "console.log(1 + 1); // 3", '```',
      '<!-- snippet: fragment of nowhere -->', '```ts', 'x;', '```',
      '```', "import { workflow } from 'remit';", '```',
    ].join('\n');
    const { snippets: found, problems } = extractSnippets('t.md', text);
    expect(problems).toEqual([
      't.md:11: no context named "nowhere" (known: refund-deps, refund-run, resume-call, check-workflow)',
      't.md:15: code importing the library in a block labelled "": label it js or ts',
    ]);
    const results = checkSnippets(found, join(workDir, 'canary'));
    expect(results.get('s0')!.typeErrors.join('\n')).toMatch(/t\.md:2: TS2724 .*createRemitt/);
    expect(results.get('s1')!.runErrors.join('\n')).toMatch(/OptionInvalidError.*workflow/);
    expect(results.get('s2')!.claimProblems).toEqual(['t.md:9: claims 3, prints 2']);
  });

  it('matches claims with … for anything and whitespace of no account', () => {
    expect(claimHolds("completed { email: 'a@b', messageId: 'msg-…' }", "completed {\n  email: 'a@b',\n  messageId: 'msg-x/1'\n}")).toBe(true);
    expect(claimHolds("completed { email: 'a@b' }", "failed { email: 'a@b' }")).toBe(false);
  });
});
