/**
 * Waiting until a check is admitted (`guard.acquire`): check, and if the
 * denial says a retry is admitted within the time left, sleep that long and
 * check again. Never early (a decision's waits are rounded up), never past
 * `maxWaitMs`, and never more waiters than {@link MAX_WAITERS} at once.
 *
 * @module
 */

import type { Decision } from "../core/decision.ts";
import { describe } from "../core/limit.ts";
import type { CheckOptions } from "../core/options.ts";

/** Options of `acquire`: a check's, and how long it may wait. */
export interface AcquireOptions extends CheckOptions {
  /**
   * Gives up the wait: the promise rejects with the signal's reason.
   *
   * @default {none: the wait ends only by admission or maxWaitMs}
   */
  readonly signal?: AbortSignal;
  /**
   * The longest wait, ms, 0 to 2,147,483,647: a check that would be admitted
   * only later is answered at once with its denial.
   *
   * @default {10000}
   */
  readonly maxWaitMs?: number;
}

/** Callers waiting in `acquire` at once, per guard, at most: one more is answered with its denial. */
export const MAX_WAITERS = 4_096;

/** The default `maxWaitMs`. */
export const DEFAULT_MAX_WAIT_MS = 10_000;

/** The longest wait a timer takes. */
const MAX_TIMER_MS = 2_147_483_647;

/** Waiters of one guard, or of one sidecar client. */
export class Waiters {
  #count = 0;

  /**
   * Checks until admitted, as `guard.acquire` documents.
   *
   * @param check One check, consuming if admitted (the guard's, or a client's, asking its sidecar).
   * @param options The signal and the longest wait.
   * @param clock The guard's clock, ms.
   * @returns The admission, or the denial when it cannot come within the wait.
   */
  async acquire<D extends Pick<Decision, "allowed" | "retryAfterMs"> & { failure?: unknown }>(
    check: () => D | Promise<D>,
    options: AcquireOptions | undefined,
    clock: () => number,
  ): Promise<D> {
    const maxWaitMs = options?.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
    if (typeof maxWaitMs !== "number" || !(maxWaitMs >= 0 && maxWaitMs <= MAX_TIMER_MS)) {
      throw new RangeError(
        `acquire: maxWaitMs must be a number from 0 to ${MAX_TIMER_MS}, got ${describe(maxWaitMs)}`,
      );
    }
    const signal = options?.signal;
    signal?.throwIfAborted();
    const deadline = clock() + maxWaitMs;
    let decision = await check();
    // A decision a failure policy made (a client's, when its sidecar could
    // not be asked) says nothing of when a retry is admitted: it ends the wait.
    const final = (d: D) => d.allowed || d.failure !== undefined;
    if (final(decision) || decision.retryAfterMs > maxWaitMs || this.#count >= MAX_WAITERS) {
      return decision;
    }
    this.#count++;
    try {
      while (!final(decision)) {
        if (decision.retryAfterMs > deadline - clock()) return decision;
        await sleep(decision.retryAfterMs, signal);
        decision = await check();
      }
      return decision;
    } finally {
      this.#count--;
    }
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    // Aborted while the check was asked: a listener added now would never hear it.
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      signal?.removeEventListener("abort", aborted);
      resolve();
    };
    const timer = setTimeout(done, Math.ceil(ms));
    const aborted = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", aborted, { once: true });
  });
}
