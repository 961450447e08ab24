/**
 * Text from a log, a workflow or a caller (workflow and node names, versions, run and interrupt
 * ids, fail() codes and messages, state, fork intents, error messages) made safe to print to a
 * terminal: the one escaping every human-readable output uses (`renderInspection`, the CLI).
 * A name holding ESC [2J, a carriage return or a newline could otherwise clear the screen, move the
 * cursor or forge a line of a table. JSON output (`--json`) is not escaped: JSON.stringify keeps
 * values exact.
 */

/**
 * What is escaped: C0 controls (U+0000–U+001F: tab, newline and carriage return too), DEL
 * (U+007F), C1 controls (U+0080–U+009F), the line and paragraph separators (U+2028, U+2029), the
 * bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069: an override
 * shows text in another order than it is), the other characters that show as nothing (Unicode's
 * default-ignorable code points: the soft hyphen, the zero-width space, the word joiner, U+FEFF,
 * the Hangul fillers, ...; and the blank braille pattern U+2800: `order-1` and `order-1` followed
 * by one of them are two runs, and must not print alike), a lone UTF-16 surrogate, and a backslash
 * that starts `\u{` (so that the escaping is reversible). Kept as they are: other characters (é,
 * 日本, emoji), and the default-ignorable ones emoji and scripts are written with (the zero-width
 * joiner and non-joiner, the variation selectors, the tags of a flag's subdivision): an id holding
 * one of those prints like one without it.
 */
export const ESCAPED = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u2800\ud800-\udfff]|(?![\u200c\u200d\ufe00-\ufe0f\u{e0020}-\u{e007f}\u{e0100}-\u{e01ef}])\p{Default_Ignorable_Code_Point}|\\(?=u\{)/u;
const ESCAPED_ALL = new RegExp(ESCAPED.source, 'gu');

/**
 * `text` with each character above written as `\u{` its code point in lower-case hex `}` (ESC is
 * `\u{1b}`, a newline `\u{a}`, a backslash before `u{` is `\u{5c}`). Reversible: reading every
 * `\u{hex}` back as its character gives `text` again, so distinct texts stay distinct. A text
 * with none of them is returned as it is.
 */
export function displayText(text: string): string {
  if (!ESCAPED.test(text)) return text;
  return text.replace(ESCAPED_ALL, (character) => `\\u{${character.codePointAt(0)!.toString(16)}}`);
}

/**
 * A template literal whose substitutions are printed with displayText (the literal parts are the
 * program's own text): shown`run ${runId}: ${message}`. Substitutions are turned into strings
 * first; a substitution that is itself shown`...` would be escaped twice, so nest plain templates.
 */
export function shown(strings: TemplateStringsArray, ...values: unknown[]): string {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += displayText(String(values[i])) + strings[i + 1]!;
  return out;
}

/** `n` and `noun`, the noun plural unless n is 1: count(1, 'run') is "1 run", count(2, 'run') "2 runs". */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/**
 * `word` after "a", or "an" when it starts with a vowel sound: withArticle('EFFECT_ATTEMPT') is
 * "an EFFECT_ATTEMPT", withArticle('Uint8Array') "a Uint8Array" (a U read "you").
 */
export function withArticle(word: string): string {
  return `${/^(?:[aeio]|u(?!ni|int|s[eu]))/i.test(word) ? 'an' : 'a'} ${word}`;
}

/**
 * At most `max` characters of `text` (cut between whole code points), with how much was left out:
 * a log's texts (a fork intent, a failure message) have no size limit, and a view prints them in a
 * line of its own.
 */
export function preview(text: string, max = 200): string {
  if (text.length <= max) return text;
  const cut = [...text.slice(0, max)];
  // A surrogate pair split by the slice leaves a lone high surrogate at the end: drop it.
  if (/[\ud800-\udbff]$/.test(cut[cut.length - 1] ?? '')) cut.pop();
  const kept = cut.join('');
  return `${kept}… (${text.length - kept.length} more characters)`;
}
