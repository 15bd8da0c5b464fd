/**
 * What the ledger answers: one decision per check, and the all-or-nothing
 * verdict of a batch.
 *
 * @module
 */

import type { FixedWindowPolicy } from "./policy.ts";

/**
 * Why a check was decided as it was.
 *
 * - `"Allowed"`: admitted and counted.
 * - `"QuotaExhausted"`: denied, the key's window has too few units left.
 * - `"StorageCapacity"`: denied, the key is new and its shard of the ledger
 *   is full of live windows (an existing key is never denied this way, and no
 *   live window is evicted to make room).
 * - `"ShadowDenied"`: the policy is in shadow mode and would have denied;
 *   the request is admitted and nothing is consumed.
 */
export type QuotaReason = "Allowed" | "QuotaExhausted" | "StorageCapacity" | "ShadowDenied";

/**
 * The ledger's answer to one check. Durations are measured by the
 * database's clock at evaluation time; the caller sees them later by the
 * commit and transport latency, so they overstate slightly, never
 * understate.
 */
export interface QuotaDecision {
  /** Whether the request may proceed (true for a shadow denial too). */
  readonly allowed: boolean;
  /** Why. */
  readonly reason: QuotaReason;
  /** The policy's limit per window. */
  readonly limit: number;
  /** Units left in the key's window after this decision (0 for a capacity denial). */
  readonly remaining: number;
  /** Milliseconds until the key's window ends and its count starts again from zero. */
  readonly resetMs: number;
  /**
   * Milliseconds to wait before the same check can pass: 0 when allowed; for
   * a shadow denial, what enforcement would have said; for a capacity
   * denial, until the shard's oldest window ends.
   */
  readonly retryAfterMs: number;
}

/** One check of a batch: `cost` units (default 1) of `policy` for `subject`. */
export interface QuotaCheck {
  /** The quota to count against. */
  readonly policy: FixedWindowPolicy;
  /** The subject, as the application normalized it; hashed before it leaves the process. */
  readonly subject: string | Uint8Array;
  /** Units to consume, a whole number from 1 to the policy's limit; default 1. */
  readonly cost?: number;
}

/**
 * The verdict of a batch, all or nothing: either every check passed (and was
 * counted, unless one was shadow-denied, in which case none was), or the
 * first denied check in input order says why, and nothing was consumed.
 */
export type QuotaBatchDecision =
  | {
    /** Every check passed. */
    readonly allowed: true;
    /** One decision per check, in input order. */
    readonly decisions: readonly QuotaDecision[];
  }
  | {
    /** At least one check was denied; nothing was consumed. */
    readonly allowed: false;
    /** Index of the first denied check in the input. */
    readonly deniedIndex: number;
    /** That check's decision. */
    readonly denial: QuotaDecision;
  };

/** One result row of `rateguard_check_v1`, as `.values()` returns it. */
export type CheckRow = readonly [
  outcome: string,
  remaining: unknown,
  resetMs: unknown,
  retryMs: unknown,
];

const REASONS: Readonly<Record<string, QuotaReason>> = {
  allowed: "Allowed",
  quota: "QuotaExhausted",
  capacity: "StorageCapacity",
  shadow: "ShadowDenied",
};

/**
 * Reads the database's rows into a batch verdict. Numbers may arrive as
 * strings, bigints or numbers depending on the caller's driver settings.
 */
export function toQuotaBatchDecision(
  rows: readonly CheckRow[],
  limits: readonly number[],
): QuotaBatchDecision {
  const decisions = rows.map(([outcome, remaining, resetMs, retryMs], i): QuotaDecision => {
    const reason = REASONS[outcome];
    if (reason === undefined) throw new TypeError(`unknown outcome from the database: ${outcome}`);
    return Object.freeze({
      allowed: reason === "Allowed" || reason === "ShadowDenied",
      reason,
      limit: limits[i],
      remaining: Number(remaining),
      resetMs: Number(resetMs),
      retryAfterMs: Number(retryMs),
    });
  });
  const deniedIndex = decisions.findIndex((d) => !d.allowed);
  return deniedIndex < 0
    ? Object.freeze({ allowed: true, decisions: Object.freeze(decisions) })
    : Object.freeze({ allowed: false, deniedIndex, denial: decisions[deniedIndex] });
}
