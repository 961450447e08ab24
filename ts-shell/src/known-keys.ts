/**
 * REMIT refuses a key it does not know wherever it takes an options object or a node spec: a
 * misspelt one (`{ runid }`, `{ aply }`, `{ creat: false }`) would otherwise be ignored, and the
 * run would go on without it (a random run id, an effect result never applied, a database created
 * by a tool meant to only read). Each caller throws its own typed error naming the key.
 */

/**
 * The first enumerable string key of `value`, its own or inherited, that is not in `known`, or
 * undefined. Inherited too: options are read through the prototype (`Object.create({ fromSeq })`
 * is used), so a misspelt key there would be ignored the same way. Class methods are not
 * enumerable, so an options object that is a class instance passes.
 */
export function unknownKey(value: object, known: readonly string[]): string | undefined {
  for (const key in value) if (!known.includes(key)) return key;
  return undefined;
}

/** `what` for a refusal's text: "is not an option of start (known: runId)". */
export function notKnown(what: string, known: readonly string[]): string {
  return `is not ${what} (known: ${known.join(', ')}); a misspelt key would otherwise be ignored`;
}

/**
 * Every key of the options type `T`, checked by the compiler both ways: a key that `T` lacks, and
 * a key of `T` left out (an option added to the interface and forgotten here would be refused).
 */
export function allKeysOf<T>() {
  return <const K extends readonly (keyof T & string)[]>(...keys: K & ([Exclude<keyof T, K[number]>] extends [never] ? unknown : ['missing', Exclude<keyof T, K[number]>])): K => keys;
}
