/**
 * Lifeguard's dynamic suspicion timeout ("Local Health Aware Suspicion").
 *
 * A member suspected by one node alone is given the longest time to refute,
 * `maxMs`; each independent suspicion of the same incarnation from another
 * member shortens it, down to `minMs` once `k` confirmations are in:
 *
 *     timeout(c) = max(minMs, maxMs − (maxMs − minMs) · log(c + 1) / log(k + 1))
 *
 * where `c` counts confirmations (suspicions from members other than the one
 * that started it) and `k = min(suspicionConfirmations, members that could
 * confirm)`. The logarithm makes the first confirmations count the most: one
 * other witness already halves the gap at k = 3. With k = 0 (nobody else to
 * ask) the timeout stays at `maxMs`.
 *
 * @module
 */

/**
 * The suspicion timeout after `confirmations` independent confirmations.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { suspicionTimeoutMs } from "./suspicion.ts";
 * const bounds = { minMs: 2_000, maxMs: 6_000, expected: 3 };
 * assert(suspicionTimeoutMs(0, bounds) === 6_000);
 * assert(suspicionTimeoutMs(3, bounds) === 2_000);
 * ```
 *
 * @param confirmations Independent confirmations so far.
 * @param bounds The least and most timeout, and the confirmations that bring it to the least.
 * @returns The timeout, ms.
 */
export function suspicionTimeoutMs(
  confirmations: number,
  bounds: { readonly minMs: number; readonly maxMs: number; readonly expected: number },
): number {
  const { minMs, maxMs, expected } = bounds;
  if (expected < 1) return maxMs;
  const fraction = Math.log(confirmations + 1) / Math.log(expected + 1);
  return Math.max(minMs, maxMs - (maxMs - minMs) * fraction);
}

/** One member's suspicion: when it started and who has confirmed it. */
export class Suspicion {
  readonly #startedAtMs: number;
  readonly #bounds: { minMs: number; maxMs: number; expected: number };
  /** IDs (as hex) of the members that suspected this incarnation, the first one included. */
  readonly #witnesses = new Set<string>();
  #looked = false;

  /**
   * A suspicion with its first witness.
   *
   * @param startedAtMs When this node began to suspect.
   * @param options Who started it, the bounds, and how many confirmations to expect.
   */
  constructor(
    startedAtMs: number,
    options: { from: string; minMs: number; maxMs: number; expected: number },
  ) {
    this.#startedAtMs = startedAtMs;
    this.#bounds = { minMs: options.minMs, maxMs: options.maxMs, expected: options.expected };
    this.#witnesses.add(options.from);
  }

  /** Confirmations so far (witnesses beyond the first). */
  get confirmations(): number {
    return this.#witnesses.size - 1;
  }

  /** When the suspicion turns into death, unless refuted first. */
  get deadlineMs(): number {
    return this.#startedAtMs + suspicionTimeoutMs(this.confirmations, this.#bounds);
  }

  /** Whether this node has probed the suspect itself since the suspicion began (see `MemberTable.dueLook`). */
  get looked(): boolean {
    return this.#looked;
  }

  /** This node probes the suspect itself: once a suspicion. */
  look(): void {
    this.#looked = true;
  }

  /** Counts `from` as a witness; returns whether it is a new one. */
  confirm(from: string): boolean {
    if (this.#witnesses.has(from)) return false;
    this.#witnesses.add(from);
    return true;
  }
}
