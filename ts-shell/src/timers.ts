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
 * when `everyMs` have passed since it was made or since the process's REMIT work last let the
 * loop run, the later, and returns at once otherwise, so that other requests of the process are served meanwhile. One turn for the whole
 * process: several drives or recoverAll's concurrent workers each pausing on its own would each
 * run its `everyMs` in the same turn of the loop (64 workers held it for 530 ms), so they share
 * the last pause's time and wait for the same turn.
 */
export function eventLoopPacer(everyMs = 10): () => Promise<void> {
  // From the pacer's making (a short drive never pauses), or the process's last turn, the later.
  const madeAt = internalTimers.monotonicNow();
  return async () => {
    if (sharedTurn === null && internalTimers.monotonicNow() - Math.max(madeAt, lastTurnAt) < everyMs) return;
    sharedTurn ??= yieldToEventLoop().then(() => {
      lastTurnAt = internalTimers.monotonicNow();
      sharedTurn = null;
    });
    await sharedTurn;
  };
}

/** When the process's REMIT work last let the event loop run (eventLoopPacer), and the turn it waits for, if any. */
let lastTurnAt = internalTimers.monotonicNow();
let sharedTurn: Promise<void> | null = null;
