/**
 * The one error type callers are meant to catch: a domain refusal with a
 * stable `code`. Caller mistakes (a key that is not a string, a negative
 * count) are `TypeError` or `RangeError` instead, as they are bugs to fix,
 * not conditions to handle.
 *
 * @module
 */

/** The stable codes of {@link RateguardError}. */
export type RateguardErrorCode =
  | "TooManyKeyLimits"
  | "TooManyClasses"
  | "UnknownClass";

/**
 * A refusal the caller can handle, such as a full table of key limits.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Guard, Limit, RateguardError } from "@rateguard/guard";
 *
 * const guard = await Guard.builder().limit(100).spawn();
 * try {
 *   guard.setShadow("no-such-class", Limit.perSecond(10));
 * } catch (e) {
 *   assert(e instanceof RateguardError && e.code === "UnknownClass");
 * }
 * ```
 */
export class RateguardError extends Error {
  /** What went wrong, stable across versions. */
  readonly code: RateguardErrorCode;

  /** An error with a stable code and a message for people. */
  constructor(code: RateguardErrorCode, message: string) {
    super(message);
    this.name = "RateguardError";
    this.code = code;
  }
}
