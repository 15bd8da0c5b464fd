/**
 * The queue of news to piggyback: at most one record per member, the newest,
 * each sent a bounded number of times, the least sent first.
 *
 * @module
 */

import { type MemberRecord, recordSize } from "../../proto/mod.ts";

interface Entry {
  readonly record: MemberRecord;
  readonly size: number;
  transmits: number;
}

/**
 * How many times each update is sent: λ · ⌈log10(N + 1)⌉, as in SWIM's
 * analysis, where a number of retransmissions logarithmic in N reaches every
 * member with high probability.
 *
 * @param retransmitMult SWIM's λ.
 * @param clusterSize Members, N.
 * @returns Transmissions of each update.
 */
export function retransmitLimit(retransmitMult: number, clusterSize: number): number {
  return retransmitMult * Math.max(1, Math.ceil(Math.log10(clusterSize + 1)));
}

/** Pending news of members, keyed by member address. */
export class Broadcasts {
  readonly #entries = new Map<string, Entry>();

  /** Updates waiting to be sent again. */
  get size(): number {
    return this.#entries.size;
  }

  /** Queues `record`, replacing older news of the same member; it starts unsent. */
  push(key: string, record: MemberRecord): void {
    this.#entries.set(key, { record, size: recordSize(record), transmits: 0 });
  }

  /**
   * Takes the least-sent records that fit in `budgetBytes`, counting one
   * transmission for each; drops those sent `limit` times.
   *
   * @param budgetBytes Room left in the datagram.
   * @param options `limit` of transmissions; `skip`, a member whose record is already in.
   */
  take(budgetBytes: number, options: { limit: number; skip?: string }): MemberRecord[] {
    const taken: MemberRecord[] = [];
    if (this.#entries.size === 0) return taken;
    const order = [...this.#entries].sort((a, b) => a[1].transmits - b[1].transmits);
    for (const [key, entry] of order) {
      if (key === options.skip) continue;
      if (entry.size > budgetBytes) continue;
      budgetBytes -= entry.size;
      taken.push(entry.record);
      if (++entry.transmits >= options.limit) this.#entries.delete(key);
    }
    return taken;
  }
}
