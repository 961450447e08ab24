/**
 * A usage error: the command line (an option's value, a system or cell id, a scenario file) is
 * wrong, so nothing ran. The CLI exits 2 on it, and 1 when a system could not run.
 */
export class UsageError extends Error {
  override name = 'UsageError';
}
