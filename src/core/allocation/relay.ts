/**
 * Which of the demand reports held this node passes on, and to whom: the
 * fresh ones, round-robin from one datagram to the next within its room,
 * each as old as it is now, none to its own origin. Relay is what makes
 * news of a node reach all in about log N periods rather than N.
 *
 * @module
 */

import { grown } from "./demand_totals.ts";
import type { HeldRows, ReportRow } from "./held_rows.ts";
import { groupBytes, MAX_GROUPS_PER_SECTION, type RelayedGroup } from "./report.ts";

/** The relay over the reports held, by their place in the turn (see `HeardReports`). */
export class Relay {
  readonly #rows: HeldRows;
  readonly #freshMs: number;
  /** By place in the turn, the bytes of the report there. */
  readonly #bytesAt: Uint8Array[] = [];
  /**
   * By place in the turn, from when the report there is too old to pass
   * on, to within a millisecond: the walk past stale reports reads these
   * numbers, not the reports.
   */
  #staleAtMs = new Float64Array(16);
  #cursor = 0;

  /** A relay of reports younger than `freshMs`, read from `rows`. */
  constructor(rows: HeldRows, freshMs: number) {
    this.#rows = rows;
    this.#freshMs = freshMs;
  }

  /** The report at `turn` is now `row`, whose bytes are `bytes`. */
  set(turn: number, row: ReportRow, bytes: Uint8Array): void {
    if (turn >= this.#staleAtMs.length) this.#staleAtMs = grown(this.#staleAtMs);
    // When it becomes too old to pass on, to within rounding.
    this.#staleAtMs[turn] = row.ageMs + 1 > this.#freshMs
      ? -Infinity
      : row.receivedMs - row.ageMs + this.#freshMs;
    this.#bytesAt[turn] = bytes;
  }

  /** The turn holds `length` reports now (one was forgotten, the rest set again). */
  truncate(length: number): void {
    this.#bytesAt.length = length;
  }

  /**
   * Reports to pass on to the member `to`, within `budgetBytes`: the fresh
   * ones, round-robin from one call to the next, each as old as it is now
   * (a millisecond older at least, so that none circulates unaged), none of
   * them `to`'s own. Their bytes are the ones held, which the origin's next
   * report overwrites: encode them before taking more.
   */
  relayed(
    nowMs: number,
    to: { readonly hi: number; readonly lo: number },
    budgetBytes: number,
  ): RelayedGroup[] {
    const groups: RelayedGroup[] = [];
    const n = this.#bytesAt.length;
    // A section's groups, this node's own one of them; no group fits once
    // the budget is below a group's header.
    let i = 0;
    for (
      ;
      i < n && groups.length < MAX_GROUPS_PER_SECTION - 1 && budgetBytes >= groupBytes(0);
      i++
    ) {
      const turn = (this.#cursor + i) % n;
      if (nowMs > this.#staleAtMs[turn] + 1) continue;
      // Read from the rows and the bytes alone, not the reports (see `held_rows.ts`).
      const bytes = this.#bytesAt[turn];
      const ageMs = this.#rows.relayAgeMs(turn, nowMs);
      if (ageMs > this.#freshMs || this.#rows.isOrigin(turn, to)) continue;
      // The first that does not fit is the first of the next call.
      if (bytes.length > budgetBytes) break;
      groups.push({ bytes, ageMs });
      budgetBytes -= bytes.length;
    }
    // The next call starts past what this one looked at: a fleet larger
    // than a datagram holds gets every origin passed on in turn, rather than
    // mostly the same ones again, which its receivers already hold.
    this.#cursor = n === 0 ? 0 : (this.#cursor + i) % n;
    return groups;
  }
}
