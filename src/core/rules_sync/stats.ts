/**
 * What a member's rule sharing did and holds, as `stats()` shows it, and
 * the same figures for an instance that shares no rules: the shape, the
 * counts kept for it, and the snapshot made of them.
 *
 * @module
 */

import type { Sender } from "../../proto/mod.ts";
import { digestHex, type StepWatch } from "./step.ts";
import type { RuleTable } from "./table.ts";

/**
 * Which of the fleet's rules this instance holds, and what sharing them did
 * (`stats().rules`, and `FleetNode.stats(nowMs).rules`): one shape from the
 * rule sharing that counts them to the snapshot the sidecar serves. Two
 * instances with the same `digest` hold the same rules.
 */
export interface FleetRulesStats {
  /** Whether this instance shares rule changes with the fleet (`fleetRules`). */
  readonly shared: boolean;
  /** Still learning the fleet's rules after a start: held at the floor meanwhile. */
  readonly learning: boolean;
  /** The newest change held: its version's clock reading (wall ms × 1024 + a counter); 0 for none. */
  readonly version: number;
  /** The digest of the rules held, 16 hex digits. */
  readonly digest: string;
  /**
   * Whether the digest has disagreed with a live peer's for longer than a
   * minute (`OUT_OF_STEP_MS`): not a change spreading, a fault. The
   * instance keeps pulling until they agree.
   */
  readonly outOfStep: boolean;
  /** How long the digest has disagreed with a live peer's, ms; 0 when it agrees with all. */
  readonly apartMs: number;
  /** Why it is out of step: its digest and a peer's that differs; `""` when in step. */
  readonly outOfStepReason: string;
  /** Rules held from the fleet. */
  readonly live: number;
  /** Removals held, until they expire (an hour). */
  readonly removed: number;
  /** Peers' changes applied here. */
  readonly applied: number;
  /** Peers' changes refused: too far ahead of this clock, older than a removal's lifetime, or beyond this book's bounds. */
  readonly refused: number;
  /** Rules sections, and entries within them, refused as malformed (a bad entry is skipped alone). */
  readonly malformed: number;
  /** Rules sections from senders that are no live member here. */
  readonly strangers: number;
  /**
   * Rules sections read up to a part of a type this version does not know (a
   * later version's, in a mixed fleet): what came before it taken, the rest skipped.
   */
  readonly skippedParts: number;
  /** Page requests without this instance's ticket for their address that did not pay for an answer. */
  readonly unproven: number;
  /** Changes not kept for want of room. */
  readonly full: number;
  /** Changes made here too large to share. */
  readonly unshared: number;
  /** Entries held, rules and removals. */
  readonly entries: number;
  /** Entries held at most: those of origins that are no member take at most `bound - reserved`. */
  readonly bound: number;
  /** Of the bound, the entries kept for members' changes (strangers' cannot take them). */
  readonly reserved: number;
  /** Entries set on this instance (its own changes). */
  readonly own: number;
  /** Entries set on other members (or forged, with signing off). */
  readonly peers: number;
  /** Of `peers`, those whose origin was no live member as they came: departed members' or forged. */
  readonly strangerEntries: number;
  /**
   * Whether the table refused a rule for room since it last freed one: a
   * change made here that would not fit is refused with `RulesFull`.
   */
  readonly tableFull: boolean;
  /** Why the table is full, with its counts; `""` when it is not. */
  readonly tableFullReason: string;
  /** Transfers of a peer's whole table completed. */
  readonly transfers: number;
  /** Refusals so far, of every reason (malformed, stale, ahead of this clock, full): logged as it grows. */
  readonly refusals: number;
  /** Why the last refusal was, and from whom (`""`: none). */
  readonly lastRefusal: string;
}

/** The rule-sharing figures of a node that does not share rules. */
export const NO_RULES: FleetRulesStats = {
  shared: false,
  learning: false,
  version: 0,
  digest: "0000000000000000",
  outOfStep: false,
  apartMs: 0,
  outOfStepReason: "",
  live: 0,
  removed: 0,
  applied: 0,
  refused: 0,
  malformed: 0,
  strangers: 0,
  skippedParts: 0,
  unproven: 0,
  full: 0,
  unshared: 0,
  entries: 0,
  bound: 0,
  reserved: 0,
  own: 0,
  peers: 0,
  strangerEntries: 0,
  tableFull: false,
  tableFullReason: "",
  transfers: 0,
  refusals: 0,
  lastRefusal: "",
};

/** What a member's rule sharing counts, and why it last refused something. */
export class Counts {
  applied = 0;
  strangers = 0;
  skippedParts = 0;
  refused = 0;
  full = 0;
  unshared = 0;
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

/** What {@link rulesStats} reads: the parts of one member's rule sharing. */
export interface RulesParts {
  readonly table: RuleTable;
  readonly counts: Counts;
  readonly step: StepWatch;
  /** Whether the member is still learning the fleet's rules. */
  readonly learning: boolean;
  /** The newest version's clock held. */
  readonly version: number;
  /** Page requests refused as unproven (`serve.ts`). */
  readonly unproven: number;
  /** Transfers completed. */
  readonly transfers: number;
}

/**
 * The figures of one member's rule sharing at `nowMs` (how long the
 * digests have disagreed is counted to it).
 */
export function rulesStats(parts: RulesParts, nowMs: number): FleetRulesStats {
  const { table, counts: c, step } = parts;
  const d = table.digest();
  return {
    shared: true,
    learning: parts.learning,
    version: parts.version,
    digest: digestHex(d),
    outOfStep: step.outOfStep(nowMs),
    apartMs: step.apartMs(nowMs),
    outOfStepReason: step.reason(nowMs, d),
    live: d.live,
    removed: table.size - d.live,
    applied: c.applied,
    refused: c.refused,
    malformed: c.malformedCount,
    strangers: c.strangers,
    skippedParts: c.skippedParts,
    unproven: parts.unproven,
    full: c.full,
    unshared: c.unshared,
    entries: table.size,
    bound: table.bound,
    reserved: table.reserved,
    own: table.own,
    peers: table.size - table.own,
    strangerEntries: table.strangers,
    tableFull: table.full,
    tableFullReason: tableFullReason(table),
    transfers: parts.transfers,
    refusals: c.refusals,
    lastRefusal: c.lastRefusal,
  };
}

/** Why the table is full (a rule was refused for room since a slot was last freed), `""` when not. */
export function tableFullReason(t: RuleTable): string {
  if (!t.full) return "";
  return `the fleet rules table is full: ${t.size} of ${t.bound} entries, ${t.own} set here, ` +
    `${t.strangers} from origins that are no member (at most ${t.bound - t.reserved}; ` +
    `${t.reserved} kept for members' changes)`;
}
