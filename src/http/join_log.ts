/**
 * When the sidecar says that it is stuck joining. What it says is the
 * guard's `joinBlocked()` (decided in the core); this decides only when:
 * once as the hold has lasted a few seconds (a join takes a few protocol
 * periods: a healthy start says nothing), again at a slow interval while it
 * lasts, and a line when it ends, so that a seed that never resolves is loud
 * in the log without filling it.
 *
 * @module
 */

/** How often a hold that lasts is told again. */
export const JOIN_LOG_EVERY_MS = 60_000;

/** How long a hold lasts before it is told: longer than a join through a seed that answers. */
export const JOIN_LOG_AFTER_MS = 5_000;

/** A line to log: a warning while joining is held, news when it ends. */
export interface JoinLine {
  /** `warn` while held; `info` once it ends. */
  readonly level: "info" | "warn";
  /** The reason as the guard gives it, or "joined". */
  readonly message: string;
}

/**
 * Fed the guard's reason on a timer, tells what to log, if anything.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { JoinLog } from "./join_log.ts";
 *
 * const log = new JoinLog();
 * const why = "joining: seed rateguard.svc:7946 has not resolved (1 lookup failed)";
 * assert.equal(log.observe(0, why), undefined);
 * assert.equal(log.observe(5_000, why)?.level, "warn");
 * assert.equal(log.observe(6_000, why), undefined);
 * assert.deepEqual(log.observe(7_000, ""), { level: "info", message: "joined" });
 * ```
 */
export class JoinLog {
  readonly #everyMs: number;
  readonly #afterMs: number;
  /** When the hold now lasting was first seen; undefined while not held. */
  #sinceMs: number | undefined;
  #lastMs = -Infinity;
  #warned = false;

  /**
   * @param options `everyMs`: how often a lasting hold is told again;
   *   `afterMs`: how long a hold lasts before it is told.
   */
  constructor(options: { everyMs?: number; afterMs?: number } = {}) {
    this.#everyMs = options.everyMs ?? JOIN_LOG_EVERY_MS;
    this.#afterMs = options.afterMs ?? JOIN_LOG_AFTER_MS;
  }

  /**
   * The reason now (`guard.joinBlocked()`, empty when not joining).
   *
   * @param nowMs The time, ms.
   * @param reason Why the guard is joining, or empty.
   * @returns The line to log now, or `undefined`.
   */
  observe(nowMs: number, reason: string): JoinLine | undefined {
    if (reason === "") {
      const warned = this.#warned;
      this.#sinceMs = undefined;
      this.#warned = false;
      return warned ? { level: "info", message: "joined" } : undefined;
    }
    this.#sinceMs ??= nowMs;
    if (nowMs - this.#sinceMs < this.#afterMs) return undefined;
    if (this.#warned && nowMs - this.#lastMs < this.#everyMs) return undefined;
    this.#warned = true;
    this.#lastMs = nowMs;
    return { level: "warn", message: reason };
  }
}
