/**
 * What a member's rule sharing did and holds, as `stats()` shows it, and
 * the same figures for an instance that shares no rules.
 *
 * @module
 */

import type { Sender } from "../../proto/mod.ts";

/** What rule sharing did and holds, in `stats()`. */
export interface RulesSyncStats {
  /** Whether this member is still learning the fleet's rules (and held for it). */
  readonly rulesLearning: boolean;
  /** The newest version held, as its clock reading (0: none); with the digest, which rules it holds. */
  readonly rulesVersion: number;
  /** The table's digest as 16 hex digits: two members that agree show the same. */
  readonly rulesDigest: string;
  /** Whether the digest has disagreed with a live peer's for longer than `OUT_OF_STEP_MS` (a minute). */
  readonly rulesOutOfStep: boolean;
  /** How long the digest has disagreed with a live peer's, ms (0: it agrees with every one). */
  readonly rulesApartMs: number;
  /** Why it is out of step (the digests that differ), `""` when it is not. */
  readonly rulesOutOfStepReason: string;
  /** Rules held. */
  readonly rulesLive: number;
  /** Removals held (tombstones). */
  readonly rulesRemoved: number;
  /** Peers' changes taken and applied here. */
  readonly rulesApplied: number;
  /** Rules sections, and entries within them, refused as malformed (an entry is skipped alone). */
  readonly rulesMalformed: number;
  /** Rules sections from senders that are not live members here, dropped. */
  readonly rulesStrangers: number;
  /**
   * Rules sections whose reading stopped at a part type this version does
   * not know (a later version's, in a mixed fleet): what came before it taken.
   */
  readonly rulesSkippedParts: number;
  /** Page requests dropped: without this member's ticket for their address, and not paying for a page. */
  readonly rulesUnproven: number;
  /** Changes refused: stamped too far ahead of this clock, or older than a removal's lifetime. */
  readonly rulesRefused: number;
  /** Changes not taken for want of room (`maxEntries`). */
  readonly rulesFull: number;
  /** Local changes too large to share (class and key beyond a page). */
  readonly rulesUnshared: number;
  /** Entries held, rules and tombstones. */
  readonly rulesEntries: number;
  /** Entries held at most (`maxEntries`). */
  readonly rulesBound: number;
  /** Of the bound, the entries kept for members' changes: strangers' take at most the rest. */
  readonly rulesReserved: number;
  /** Entries whose version this member stamped: changes made here. */
  readonly rulesOwn: number;
  /** Entries stamped by others. */
  readonly rulesPeers: number;
  /** Of those, entries whose origin was no live member when they came (at most `bound - reserved`). */
  readonly rulesStrangerEntries: number;
  /** Whether a rule was refused for room since the table last freed a slot. */
  readonly rulesTableFull: boolean;
  /** Why it is full, with its counts; `""` when it is not. */
  readonly rulesTableFullReason: string;
  /** Transfers of a peer's table completed. */
  readonly rulesTransfers: number;
  /** Refusals of every reason so far (malformed, stale, ahead, full): a change of it is a new refusal to log. */
  readonly rulesRefusals: number;
  /** Why the last refusal was, and from whom (`""`: none yet). */
  readonly rulesLastRefusal: string;
}

/** The rule-sharing figures of a node that does not share rules. */
export const NO_RULES: RulesSyncStats = {
  rulesLearning: false,
  rulesVersion: 0,
  rulesDigest: "0000000000000000",
  rulesOutOfStep: false,
  rulesApartMs: 0,
  rulesOutOfStepReason: "",
  rulesLive: 0,
  rulesRemoved: 0,
  rulesApplied: 0,
  rulesMalformed: 0,
  rulesStrangers: 0,
  rulesSkippedParts: 0,
  rulesUnproven: 0,
  rulesRefused: 0,
  rulesFull: 0,
  rulesUnshared: 0,
  rulesEntries: 0,
  rulesBound: 0,
  rulesReserved: 0,
  rulesOwn: 0,
  rulesPeers: 0,
  rulesStrangerEntries: 0,
  rulesTableFull: false,
  rulesTableFullReason: "",
  rulesTransfers: 0,
  rulesRefusals: 0,
  rulesLastRefusal: "",
};

/** What a member's rule sharing counts, and why it last refused something. */
export class Counts {
  applied = 0;
  strangers = 0;
  skippedParts = 0;
  refused = 0;
  full = 0;
  unshared = 0;
  transfers = 0;
  #malformed = 0;
  #refusals = 0;
  #lastRefusal = "";

  /** Sections and entries refused as malformed. */
  get malformedCount(): number {
    return this.#malformed;
  }

  /** Refusals of every reason. */
  get refusals(): number {
    return this.#refusals;
  }

  /** Why the last refusal was, and from whom; `""` for none. */
  get lastRefusal(): string {
    return this.#lastRefusal;
  }

  /** Counts a malformed section or entry from `from`, and keeps why. */
  malformed(from: Sender, reason: string): void {
    this.#malformed++;
    this.refusal(from, `malformed ${reason}`);
  }

  /** Keeps why a change or section from `from` was refused (its own count is the caller's). */
  refusal(from: Sender | undefined, reason: string): void {
    this.#lastRefusal = from === undefined ? reason : `${reason} (from ${from.address})`;
    this.#refusals++;
  }
}
