/**
 * What a member gossips of rules on its probes and acks: the recent
 * changes it made or took, each sent λ·⌈log10(N+1)⌉ times like membership
 * news, the least sent first; and whether it is **ahead**: it made or took
 * more changes lately than gossip passes on in a few periods, so that a
 * peer whose digest differs pulls its table at once (`transfer.ts`).
 *
 * @module
 */

import { retransmitLimit } from "../membership/broadcasts.ts";
import { type RuleEntry, ruleId } from "./entry.ts";
import { entrySize } from "./entry_wire.ts";
import { RULES_HEADER_BYTES, type SectionWriter } from "./wire.ts";

/** Recent changes gossiped at once; more reach the others by transfer, as the digests disagree. */
export const OUTBOX_ENTRIES = 1_024;
/** SWIM's λ for rule changes: each is sent λ·⌈log10(N+1)⌉ times. */
const RETRANSMIT_MULT = 4;
/**
 * Changes within a window beyond which gossip would take more than a few
 * periods to pass them on (some nine go in a datagram): a member that made
 * or took more says it is ahead.
 */
const AHEAD_ENTRIES = 64;

interface Pending {
  readonly entry: RuleEntry;
  readonly size: number;
  transmits: number;
}

/** See the module doc. */
export class ChangeGossip {
  readonly #outbox = new Map<string, Pending>();
  readonly #windowMs: number;
  /** Changes made or taken since `#churnSinceMs`; past {@link AHEAD_ENTRIES}, ahead until `#aheadUntilMs`. */
  #churn = 0;
  #churnSinceMs = 0;
  #aheadUntilMs = -Infinity;

  /** @param windowMs How long a burst of changes makes this member ahead. */
  constructor(windowMs: number) {
    this.#windowMs = windowMs;
  }

  /** Whether this member is ahead at `nowMs`. */
  ahead(nowMs: number): boolean {
    return nowMs < this.#aheadUntilMs;
  }

  /**
   * Counts a change made or taken here.
   *
   * @returns Whether it just made this member ahead.
   */
  changed(nowMs: number): boolean {
    if (nowMs - this.#churnSinceMs >= this.#windowMs) {
      this.#churn = 0;
      this.#churnSinceMs = nowMs;
    }
    if (++this.#churn <= AHEAD_ENTRIES) return false;
    this.#aheadUntilMs = nowMs + this.#windowMs;
    return this.#churn === AHEAD_ENTRIES + 1;
  }

  /** Starts the gossip of `entry`, in place of an earlier change of its rule. */
  enqueue(entry: RuleEntry): void {
    const id = ruleId(entry.kind, entry.className, entry.key);
    this.#outbox.delete(id);
    this.#outbox.set(id, { entry, size: entrySize(entry), transmits: 0 });
    if (this.#outbox.size > OUTBOX_ENTRIES) {
      // The oldest goes: the others learn it by transfer, as the digests disagree.
      this.#outbox.delete(this.#outbox.keys().next().value!);
    }
  }

  /** Writes recent changes, the least sent first, as room allows, for a fleet of `members`. */
  write(writer: SectionWriter, members: number): void {
    if (this.#outbox.size === 0) return;
    const limit = retransmitLimit(RETRANSMIT_MULT, members);
    const order = [...this.#outbox].sort((a, b) => a[1].transmits - b[1].transmits);
    for (const [id, pending] of order) {
      if (writer.room < 1 + RULES_HEADER_BYTES) break;
      if (!writer.change(pending.entry, pending.size)) continue;
      if (++pending.transmits >= limit) this.#outbox.delete(id);
    }
  }
}
