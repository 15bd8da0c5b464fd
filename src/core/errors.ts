/**
 * The errors of rateguard, and the one rule they follow:
 *
 * - A caller's mistake (a key that is not a string, a negative count, a
 *   bound out of range) is a `TypeError` or a `RangeError` whose message
 *   names the value: a bug to fix, not a condition to handle.
 * - A refusal the caller is meant to handle (a full table of key limits, an
 *   unknown class) is a {@link RateguardError} with a stable `code`.
 * - A failure of something outside the caller's code (the database behind
 *   the ledger, the sidecar behind the client) is an
 *   {@link OperationalError}: its subclass says which (`LedgerError`,
 *   `ClientUnavailableError`), its `code` what happened, its `cause` the
 *   underlying error.
 *
 * @module
 */

/** The stable codes of {@link RateguardError}. */
export type RateguardErrorCode =
  | "TooManyKeyLimits"
  | "TooManyClasses"
  | "UnknownClass"
  | "RulesFull";

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

  /**
   * A refusal with a stable code.
   *
   * @param code What was refused, stable across versions.
   * @param message For people.
   */
  constructor(code: RateguardErrorCode, message: string) {
    super(message);
    this.name = "RateguardError";
    this.code = code;
  }
}

/**
 * A failure of something outside the caller's code: the database behind
 * the ledger (`LedgerError`), the sidecar behind the client
 * (`ClientUnavailableError`). Catch this base to handle both alike: fail
 * closed, fail open, or retry; `code` is stable across versions and
 * `cause` keeps the underlying error.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { OperationalError } from "@rateguard/guard";
 * import { LedgerError } from "@rateguard/guard/postgres";
 *
 * const e = new LedgerError("Unavailable", "check: connection refused", { mayHaveConsumed: false });
 * assert(e instanceof OperationalError && e.code === "Unavailable");
 * ```
 */
export class OperationalError extends Error {
  /** What went wrong, stable across versions; each subclass documents its codes. */
  readonly code: string;

  /**
   * An operational failure.
   *
   * @param code What went wrong, stable across versions.
   * @param message For people.
   * @param options `cause`: the underlying error, kept for diagnosis.
   */
  constructor(code: string, message: string, options: { readonly cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "OperationalError";
    this.code = code;
  }
}

/**
 * What a thrown value says, whatever was thrown: an `Error`'s message (its
 * name when the message is empty), a string as it is, anything else named
 * with its type, so a log line never reads "undefined".
 *
 * @param error Whatever was caught.
 * @returns A message for people.
 */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === "string") return error;
  if (error === null || error === undefined) return `a thrown ${error}`;
  if (typeof error === "object") {
    const message = (error as { message?: unknown }).message;
    if (typeof message === "string" && message !== "") return message;
    let text: string;
    try {
      text = JSON.stringify(error);
    } catch {
      text = Object.prototype.toString.call(error);
    }
    return `a thrown object: ${text}`;
  }
  return `a thrown ${typeof error}: ${String(error)}`;
}
