/**
 * The timer functions as they were when REMIT was loaded, for REMIT's own waits (a lock's retry, a
 * store's backoff, checkWorkflow's pause and stall detector, continueRun's wait for an effect in
 * flight, a long drive's pause): a test's fake timers (vi.useFakeTimers(), sinon's) installed
 * afterwards replace the global ones, and a wait on a faked setTimeout never ends unless the test
 * advances it, which it cannot know to do. `monotonicNow` times those waits (performance.now,
 * which vitest fakes too). Clocks whose readings are stored or compared with stored times (a
 * store's clock, the effect lease's) keep reading Date.now at each call, so a test can fake the
 * time a lease is judged by.
 */
export const internalTimers = {
  setTimeout: globalThis.setTimeout.bind(globalThis) as typeof globalThis.setTimeout,
  clearTimeout: globalThis.clearTimeout.bind(globalThis) as typeof globalThis.clearTimeout,
  setImmediate: globalThis.setImmediate.bind(globalThis) as typeof globalThis.setImmediate,
  monotonicNow: performance.now.bind(performance) as () => number,
};

/** Resolves after `ms` by the real timers (internalTimers), whatever fake timers a test installed since. */
export function sleepInternally(ms: number): Promise<void> {
  return new Promise<void>((resolve) => internalTimers.setTimeout(resolve, ms));
}

/** Resolves once the event loop has run (internalTimers' setImmediate). */
export function yieldToEventLoop(): Promise<void> {
  return new Promise<void>((resolve) => internalTimers.setImmediate(resolve));
}

/**
 * A pause for long synchronous-looking work (a drive of pure steps on a store that answers at
 * once, a listing that reads thousands of logs): the function it gives lets the event loop run
 * when `everyMs` have passed since the pacer was made or last paused, and returns at once
 * otherwise, so that other requests of the process are served meanwhile.
 */
export function eventLoopPacer(everyMs = 10): () => Promise<void> {
  let since = internalTimers.monotonicNow();
  return async () => {
    if (internalTimers.monotonicNow() - since < everyMs) return;
    await yieldToEventLoop();
    since = internalTimers.monotonicNow();
  };
}
