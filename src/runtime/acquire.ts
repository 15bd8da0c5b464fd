/**
 * Waiting until a check is admitted (`acquire`). The guard's callers wait
 * in one line per key ({@link WaitLine}, in the core), served in arrival
 * order under one timer per key: each admission is one check, and a wait
 * is one request however long it lasts. The sidecar client's callers, who
 * can only ask their sidecar, check again after each denial's wait
 * ({@link Retrier}). Either way: never early (a decision's waits are
 * rounded up), never past `maxWaitMs`, and never more waiters than
 * {@link MAX_WAITERS} at once.
 *
 * @module
 */

import type { Decision } from "../core/decision.ts";
import type { Enforcer } from "../core/enforcer.ts";
import { describe } from "../core/describe.ts";
import type { CheckOptions } from "../core/options.ts";
import { type Waiter, WaitLine } from "../core/wait_line.ts";
import type { Clock } from "./clock.ts";
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

/** One key's line and its one timer. */
interface TimedLine {
  readonly id: string;
  readonly line: WaitLine;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** What the timer is set for, ms on the guard's clock. */
  atMs: number;
}

/** The callers waiting in one guard's `acquire`: a line per key, a timer per line. */
export class Waiters {
  #count = 0;
  readonly #lines = new Map<string, TimedLine>();
  readonly #enforcer: Enforcer;
  readonly #clock: Clock;

  /**
   * No one waiting yet.
   *
   * @param enforcer The guard's enforcer, whose keys the lines wait on.
   * @param clock The guard's clock, ms.
   */
  constructor(enforcer: Enforcer, clock: Clock) {
    this.#enforcer = enforcer;
    this.#clock = clock;
  }

  /**
   * Waits in the key's line until admitted, as `guard.acquire` documents.
   *
   * @param target The key, its class and the cost.
   * @param options The signal and the longest wait.
   * @returns The admission, or the denial when it cannot come within the wait.
   */
  async acquire(
    target: { readonly className: string; readonly key: string; readonly cost: number },
    options: AcquireOptions | undefined,
  ): Promise<Decision> {
    const maxWaitMs = checkMaxWaitMs(options?.maxWaitMs);
    const signal = options?.signal;
    signal?.throwIfAborted();
    const timed = this.#lineOf(target.className, target.key);
    const nowMs = this.#clock();
    let resolve!: (decision: Decision) => void, reject!: (reason: unknown) => void;
    const answer = new Promise<Decision>((res, rej) => (resolve = res, reject = rej));
    const waiter: Waiter = {
      cost: target.cost,
      // Beyond the bound no one more waits: answered now, as with no time to.
      deadlineMs: this.#count < MAX_WAITERS ? nowMs + maxWaitMs : nowMs,
      settle: (decision) => {
        this.#count--;
        signal?.removeEventListener("abort", aborted);
        resolve(decision);
      },
    };
    const aborted = () => {
      if (!timed.line.leave(waiter, this.#clock())) return;
      this.#count--;
      reject(signal!.reason);
      this.#arm(timed);
    };
    let now: Decision | undefined;
    try {
      now = timed.line.join(waiter, nowMs);
    } catch (e) {
      this.#arm(timed); // a line made for a key refused: let it go
      throw e;
    }
    if (now !== undefined) {
      this.#arm(timed);
      return now;
    }
    this.#count++;
    signal?.addEventListener("abort", aborted, { once: true });
    this.#arm(timed);
    return await answer;
  }

  #lineOf(className: string, key: string): TimedLine {
    // The class's length first: no two (class, key) pairs make one id.
    const id = `${className.length}:${className}${key}`;
    let timed = this.#lines.get(id);
    if (timed === undefined) {
      const line = new WaitLine(this.#enforcer.lineGate(className, key));
      timed = { id, line, timer: undefined, atMs: NaN };
      this.#lines.set(id, timed);
    }
    return timed;
  }

  /** Sets the line's one timer for when its head is due, or lets the line go when empty. */
  #arm(timed: TimedLine): void {
    const atMs = timed.line.pollTimeout();
    if (timed.timer !== undefined && timed.atMs === atMs) return;
    clearTimeout(timed.timer);
    timed.timer = undefined;
    if (atMs === undefined) {
      if (this.#lines.get(timed.id) === timed) this.#lines.delete(timed.id);
      return;
    }
    timed.atMs = atMs;
    const delayMs = Math.min(MAX_TIMER_MS, Math.max(0, Math.ceil(atMs - this.#clock())));
    timed.timer = setTimeout(() => {
      timed.timer = undefined;
      timed.line.handleTimeout(this.#clock());
      this.#arm(timed);
    }, delayMs);
  }
}

/**
 * Waiters of one sidecar client: each checks, and after a denial whose wait
 * fits in the time left, sleeps that long and checks again. The sidecar
 * counts every such check; it has no line to wait in.
 */
export class Retrier {
  #count = 0;

  /**
   * Checks until admitted, as `client.acquire` documents.
   *
   * @param check One check, consuming if admitted: the client's, asking its sidecar.
   * @param options The signal and the longest wait.
   * @param clock The client's clock, ms.
   * @returns The admission, or the denial when it cannot come within the wait.
   */
  async acquire<D extends Pick<Decision, "allowed" | "retryAfterMs"> & { failure?: unknown }>(
    check: () => D | Promise<D>,
    options: AcquireOptions | undefined,
    clock: () => number,
  ): Promise<D> {
    const maxWaitMs = checkMaxWaitMs(options?.maxWaitMs);
    const signal = options?.signal;
    signal?.throwIfAborted();
    const deadline = clock() + maxWaitMs;
    let decision = await check();
    // A decision a failure policy made (when the sidecar could not be
    // asked) says nothing of when a retry is admitted: it ends the wait.
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

function checkMaxWaitMs(value: number | undefined): number {
  const maxWaitMs = value ?? DEFAULT_MAX_WAIT_MS;
  if (typeof maxWaitMs !== "number" || !(maxWaitMs >= 0 && maxWaitMs <= MAX_TIMER_MS)) {
    throw new RangeError(
      `acquire: maxWaitMs must be a number from 0 to ${MAX_TIMER_MS}, got ${describe(maxWaitMs)}`,
    );
  }
  return maxWaitMs;
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
