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

/**
 * Pending news of members, keyed by member address. Records wait in buckets
 * by how often they were sent, so that taking the least sent costs what is
 * taken, not a sort of the queue: a node that learns a thousand members at
 * once queues a thousand records and sends them over hundreds of datagrams.
 */
export class Broadcasts {
  /** By transmissions so far: records in the order they reached that count. */
  readonly #buckets: Map<string, Entry>[] = [];
  /** Which bucket each queued member's record is in. */
  readonly #where = new Map<string, number>();
  /** No record queued was ever smaller: below this room, none fits. */
  #leastSize = Infinity;

  /** Updates waiting to be sent again. */
  get size(): number {
    return this.#where.size;
  }

  /** Queues `record`, replacing older news of the same member; it starts unsent. */
  push(key: string, record: MemberRecord): void {
    const at = this.#where.get(key);
    if (at !== undefined) this.#buckets[at].delete(key);
    const size = recordSize(record);
    this.#leastSize = Math.min(this.#leastSize, size);
    this.#bucket(0).set(key, { record, size, transmits: 0 });
    this.#where.set(key, 0);
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
    const moved: [string, Entry][] = [];
    for (let t = 0; t < this.#buckets.length && budgetBytes >= this.#leastSize; t++) {
      const bucket = this.#buckets[t];
      for (const [key, entry] of bucket) {
        if (budgetBytes < this.#leastSize) break;
        if (key === options.skip || entry.size > budgetBytes) continue;
        budgetBytes -= entry.size;
        taken.push(entry.record);
        bucket.delete(key);
        if (++entry.transmits >= options.limit) this.#where.delete(key);
        else moved.push([key, entry]);
      }
    }
    // Moved after the walk, so that no record goes twice in one datagram.
    for (const [key, entry] of moved) {
      this.#bucket(entry.transmits).set(key, entry);
      this.#where.set(key, entry.transmits);
    }
    return taken;
  }

  #bucket(transmits: number): Map<string, Entry> {
    while (this.#buckets.length <= transmits) this.#buckets.push(new Map());
    return this.#buckets[transmits];
  }
}
