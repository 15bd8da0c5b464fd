/**
 * Fixed-window quota policies for the PostgreSQL ledger: what a policy is,
 * the bounds every backend can represent, and the fingerprint that ties a
 * stored counter to the exact policy that wrote it.
 *
 * @module
 */

import { toHex } from "./bytes.ts";

/** The largest limit a policy may have: every count stays exact in a double. */
export const MAX_LIMIT: number = Number.MAX_SAFE_INTEGER;

/**
 * The longest window a policy may have: ten years of 366 days. Far longer
 * than any billing period, and far from the end of PostgreSQL's time range.
 */
export const MAX_WINDOW_MS: number = 10 * 366 * 24 * 60 * 60 * 1_000;

/**
 * Whether a policy's denials are enforced, or only reported (`"shadow"`: the
 * request is admitted and the decision says it would have been denied).
 */
export type QuotaMode = "enforce" | "shadow";

/** What a {@link FixedWindowPolicy} is made of. */
export interface FixedWindowPolicyOptions {
  /** Names the quota, such as `"billing.api"`: letters, digits and `._:-`, 1 to 64. */
  readonly id: string;
  /** Names what is counted under it, such as `"tenant"`: same alphabet. */
  readonly scope: string;
  /** Units admitted per window, a whole number from 1 to {@link MAX_LIMIT}. */
  readonly limit: number;
  /** Window length in whole milliseconds, from 1 to {@link MAX_WINDOW_MS}. */
  readonly windowMs: number;
  /**
   * `"enforce"`, or `"shadow"` to observe the policy before enforcing it.
   *
   * @default {"enforce"}
   */
  readonly mode?: QuotaMode;
}

// Names are part of the fingerprint and appear in operators' dashboards: a
// small alphabet keeps them printable and keeps subjects from being smuggled
// into them.
const NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
const FINGERPRINT_VERSION = "rateguard/fixed-window/v1";
const FINGERPRINT_BYTES = 16;

/**
 * A quota of `limit` units per window of `windowMs`, anchored at the first
 * admitted check of each key (not at calendar boundaries): a key's window
 * starts when its first unit is admitted and lasts exactly `windowMs`.
 *
 * The id, scope, limit and window form the policy's fingerprint, which is
 * part of every stored key: changing any of them starts fresh counters
 * rather than reinterpreting old ones. The mode is left out, so switching a
 * warmed shadow policy to enforcement keeps its counters.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FixedWindowPolicy } from "@rateguard/guard/postgres";
 *
 * const daily = new FixedWindowPolicy({
 *   id: "billing.api",
 *   scope: "tenant",
 *   limit: 10_000,
 *   windowMs: 24 * 60 * 60 * 1_000,
 * });
 * const observed = daily.withMode("shadow");
 * assert(observed.mode === "shadow");
 * assert((await observed.fingerprint()) === (await daily.fingerprint()));
 * ```
 */
export class FixedWindowPolicy {
  /** The quota's name. */
  readonly id: string;
  /** What is counted under the quota. */
  readonly scope: string;
  /** Units admitted per window. */
  readonly limit: number;
  /** Window length in milliseconds. */
  readonly windowMs: number;
  /** Whether denials are enforced or only reported. */
  readonly mode: QuotaMode;
  #fingerprint: Promise<string> | undefined;

  /**
   * Validates and freezes a policy.
   *
   * @throws {TypeError} when a name is not a string or has characters outside its alphabet.
   * @throws {RangeError} when the limit or window is not a whole number in range.
   *
   * @param options The policy's id, scope, limit, window and mode.
   */
  constructor(options: FixedWindowPolicyOptions) {
    if (typeof options !== "object" || options === null) {
      throw new TypeError("FixedWindowPolicy: options must be an object");
    }
    this.id = checkName(options.id, "id");
    this.scope = checkName(options.scope, "scope");
    this.limit = checkWhole(options.limit, "limit", MAX_LIMIT);
    this.windowMs = checkWhole(options.windowMs, "windowMs", MAX_WINDOW_MS);
    this.mode = checkMode(options.mode ?? "enforce");
    Object.freeze(this);
  }

  /**
   * The same policy (and counters) in another mode.
   *
   * @param mode `"enforce"` or `"shadow"`.
   * @returns A new policy; this one is unchanged.
   * @throws {TypeError} when `mode` is neither.
   */
  withMode(mode: QuotaMode): FixedWindowPolicy {
    const { id, scope, limit, windowMs } = this;
    return new FixedWindowPolicy({ id, scope, limit, windowMs, mode });
  }

  /**
   * The policy's fingerprint as 32 hex digits: the first 16 bytes of
   * SHA-256 over a versioned encoding of id, scope, limit and window. It is
   * stored with every counter; operators can compute it to find a policy's
   * rows.
   *
   * @returns A promise of the fingerprint.
   */
  fingerprint(): Promise<string> {
    // Policies are immutable, so the digest is computed once; the field is
    // the one thing freezing leaves writable, because it is private.
    this.#fingerprint ??= digestHex(
      JSON.stringify([FINGERPRINT_VERSION, this.id, this.scope, this.limit, this.windowMs]),
    );
    return this.#fingerprint;
  }
}

async function digestHex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return toHex(new Uint8Array(digest, 0, FINGERPRINT_BYTES));
}

function checkName(value: unknown, name: string): string {
  if (typeof value !== "string" || !NAME.test(value)) {
    throw new TypeError(
      `FixedWindowPolicy: ${name} must be 1 to 64 letters, digits or ._:- starting with a ` +
        `letter or digit, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function checkWhole(value: unknown, name: string, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > max) {
    throw new RangeError(
      `FixedWindowPolicy: ${name} must be a whole number from 1 to ${max}, got ${String(value)}`,
    );
  }
  return value;
}

function checkMode(value: unknown): QuotaMode {
  if (value !== "enforce" && value !== "shadow") {
    throw new TypeError(
      `FixedWindowPolicy: mode must be "enforce" or "shadow", got ${JSON.stringify(value)}`,
    );
  }
  return value;
}
