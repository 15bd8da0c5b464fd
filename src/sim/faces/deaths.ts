/**
 * False deaths: a member declared dead by another while it runs, counted
 * once per (observer, member) pair. The one count of them, for the
 * membership figures (`figures/membership_large.ts`) and the fleet runs of the
 * accuracy tables (`Fleet.falseDeaths`).
 *
 * @module
 */

import type { MemberChange } from "../../core/membership/mod.ts";

/** The (observer, member) pairs that saw a living member declared dead. */
export class FalseDeaths {
  readonly #pairs = new Set<string>();

  /**
   * Counts `change`, seen by node `observer`, when it declares a member dead
   * and `alive` says that member runs (the same life) all the same.
   *
   * @param observer The index of the node that changed its mind.
   * @param change The change.
   * @param alive Whether the member it is about runs now, in the life the change names.
   */
  record(observer: number, change: MemberChange, alive: (change: MemberChange) => boolean): void {
    if (change.member.state !== "dead" || !alive(change)) return;
    this.#pairs.add(`${observer} ${change.member.address}`);
  }

  /** Pairs counted so far. */
  get count(): number {
    return this.#pairs.size;
  }
}
