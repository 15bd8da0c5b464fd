/**
 * What a node does when it loses sight of members: the partition policies.
 * A standalone guard has no partitions; the policy takes effect once the
 * guard gossips.
 *
 * @module
 */

import { describe } from "./describe.ts";
import { parseDurationMs } from "./duration.ts";

/** The three policies by name. */
export type PartitionPolicyKind = "optimistic" | "holdDown" | "quorum";

/** The default hold of {@link PartitionPolicy.holdDown}: ten seconds. */
const DEFAULT_HOLD_DOWN_MS = 10_000;

/**
 * How a node shares the limit when the cluster may be split.
 *
 * - `optimistic()`: the members in sight share the whole limit (a split into
 *   k groups admits up to k × R), maximum availability.
 * - `holdDown(ms)`: a member lost from sight keeps its share out of use for
 *   `ms` (default ten seconds), riding out GC pauses and restarts.
 * - `quorum()`: a node that sees no majority of the members it knows holds
 *   every key at the floor (R + ε overall).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PartitionPolicy } from "@rateguard/guard";
 *
 * const p = PartitionPolicy.parse("holddown:30s");
 * assert(p.kind === "holdDown" && p.holdMs === 30_000);
 * ```
 */
export class PartitionPolicy {
  /** Which policy. */
  readonly kind: PartitionPolicyKind;
  /** For holdDown, how long a lost member's share stays out of use, ms; 0 otherwise. */
  readonly holdMs: number;

  private constructor(kind: PartitionPolicyKind, holdMs: number) {
    this.kind = kind;
    this.holdMs = holdMs;
  }

  /**
   * Members in sight share the whole limit.
   *
   * @returns The policy.
   */
  static optimistic(): PartitionPolicy {
    return new PartitionPolicy("optimistic", 0);
  }

  /**
   * A lost member's share stays out of use for `holdMs` (default 10 s).
   *
   * @param holdMs How long a lost member's share stays out of use, ms.
   * @returns The policy.
   * @throws {RangeError} when `holdMs` is negative or not finite.
   */
  static holdDown(holdMs: number = DEFAULT_HOLD_DOWN_MS): PartitionPolicy {
    if (typeof holdMs !== "number" || !Number.isFinite(holdMs) || holdMs < 0) {
      throw new RangeError(
        `PartitionPolicy.holdDown: the hold must be a finite number of ms ≥ 0, got ${
          describe(holdMs)
        }`,
      );
    }
    return new PartitionPolicy("holdDown", holdMs);
  }

  /**
   * Without a majority of the known members in sight, hold at the floor.
   *
   * @returns The policy.
   */
  static quorum(): PartitionPolicy {
    return new PartitionPolicy("quorum", 0);
  }

  /**
   * Reads `optimistic`, `quorum`, `holddown` or `holddown:<duration>` with a
   * duration such as `500ms`, `10s`, `2m` or a bare number of milliseconds.
   *
   * @throws {TypeError} naming the text when it is none of those.
   *
   * @param text The policy's text.
   * @returns The policy.
   */
  static parse(text: string): PartitionPolicy {
    const t = typeof text === "string" ? text.trim().toLowerCase() : undefined;
    if (t === "optimistic") return PartitionPolicy.optimistic();
    if (t === "quorum") return PartitionPolicy.quorum();
    if (t === "holddown" || t === "hold-down") return PartitionPolicy.holdDown();
    const m = t === undefined ? null : /^hold-?down:(.*)$/.exec(t);
    const holdMs = m === null ? undefined : parseDurationMs(m[1]);
    if (holdMs === undefined) {
      throw new TypeError(
        `unknown partition policy ${
          describe(text)
        }: expected optimistic, quorum, holddown or holddown:<duration> (like holddown:10s)`,
      );
    }
    return PartitionPolicy.holdDown(holdMs);
  }

  /**
   * `optimistic`, `quorum` or `holddown:10000ms`.
   *
   * @returns The policy's text, as `parse` reads it.
   */
  toString(): string {
    return this.kind === "holdDown" ? `holddown:${this.holdMs}ms` : this.kind;
  }
}
