/**
 * Waiting for work handed on, within a bound: a leave waits for its
 * goodbyes to go out, but a dead network or a stuck runtime must never
 * hold a shutdown up.
 *
 * @module
 */

/**
 * Settles once every promise of `pending` has settled or `waitMs` has
 * passed, whichever comes first. Never rejects, and leaves no timer
 * behind, so that a process with nothing else to do can exit.
 *
 * @param pending What to wait for; read once, when called.
 * @param waitMs The most to wait, ms; 0 or less waits for nothing.
 * @returns A promise that settles when either happens.
 *
 * @example
 * ```ts
 * import { settledWithin } from "./within.ts";
 *
 * const never = new Promise<void>(() => {});
 * await settledWithin([never, Promise.reject(new Error("ignored"))], 10);
 * ```
 */
export async function settledWithin(
  pending: Iterable<Promise<unknown>>,
  waitMs: number,
): Promise<void> {
  const all = Promise.allSettled(pending);
  if (waitMs <= 0) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
  try {
    await Promise.race([all, late]);
  } finally {
    clearTimeout(timer);
  }
}
