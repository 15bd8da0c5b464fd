/**
 * The queue of news to piggyback: at most one record per member, the newest,
 * each sent a bounded number of times, the least sent first.
 *
 * @module
 */

import { type MemberRecord, recordSize } from "../../proto/mod.ts";

interface Entry {
  readonly key: string;
  readonly record: MemberRecord;
  readonly size: number;
  transmits: number;
  /**
   * The ticket of the one bucket place that holds it queued, 0 once taken
   * or replaced by newer news: a place whose ticket differs is skipped.
   */
  ticket: number;
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
 * A bucket is an array read from its head, an entry taken or replaced only
 * marked so: a Map used as a queue, its entries deleted at the front, cost
 * a large fleet's nodes more than all else of membership. An entry sent
 * again moves to the next bucket as it is, under a new ticket: taken out
 * of the index and put back, with a new entry each time, it cost a forming
 * fleet of a thousand a twentieth of its time.
 */
export class Broadcasts {
  /** By transmissions so far: entries in the order they reached that count. */
  readonly #buckets: Entry[][] = [];
  /** By bucket and place, the ticket the entry there had when put there. */
  readonly #tickets: number[][] = [];
  /** Where each bucket's first queued entry may be: those before it are not. */
  readonly #heads: number[] = [];
  /** Each queued member's entry. */
  readonly #where = new Map<string, Entry>();
  /** Places in the buckets no longer queued, past the heads. */
  #stale = 0;
  /** The last ticket given; 0 is none. */
  #ticket = 0;
  /** No record queued was ever smaller: below this room, none fits. */
  #leastSize = Infinity;

  /** Updates waiting to be sent again. */
  get size(): number {
    return this.#where.size;
  }

  /** Queues `record`, replacing older news of the same member; it starts unsent. */
  push(key: string, record: MemberRecord): void {
    const known = this.#where.get(key);
    if (known) this.#unplace(known);
    const size = recordSize(record);
    this.#leastSize = Math.min(this.#leastSize, size);
    const entry: Entry = { key, record, size, transmits: 0, ticket: 0 };
    this.#where.set(key, entry);
    this.#place(entry);
    this.#sweep();
  }

  /**
   * Takes the least-sent records that fit in `budgetBytes`, counting one
   * transmission for each; drops those sent `limit` times.
   *
   * @param budgetBytes Room left in the datagram.
   * @param options `limit` of transmissions; `skip`, the members whose records
   *   are already in (one or two); `uncounted`, to send them without counting a transmission
   *   (to a seed: see `compose.ts`).
   */
  take(
    budgetBytes: number,
    options: { limit: number; skip?: readonly string[]; uncounted?: boolean },
  ): MemberRecord[] {
    const counted = options.uncounted ? 0 : 1;
    const taken: MemberRecord[] = [];
    const moved: Entry[] = [];
    for (let t = 0; t < this.#buckets.length && budgetBytes >= this.#leastSize; t++) {
      const bucket = this.#buckets[t];
      const tickets = this.#tickets[t];
      let head = this.#heads[t];
      for (let i = head; i < bucket.length && budgetBytes >= this.#leastSize; i++) {
        const entry = bucket[i];
        const queued = entry.ticket === tickets[i];
        if (queued && (entry.size > budgetBytes || options.skip?.includes(entry.key))) continue;
        if (queued) {
          budgetBytes -= entry.size;
          taken.push(entry.record);
          this.#unplace(entry);
          if (entry.transmits + counted < options.limit) moved.push(entry);
          else this.#where.delete(entry.key);
        }
        // Nothing queued before it: the head moves on.
        if (i === head) {
          head++;
          this.#stale--;
        }
      }
      this.#heads[t] = head;
      if (head > 32 && head > bucket.length / 2) {
        bucket.splice(0, head);
        tickets.splice(0, head);
        this.#heads[t] = 0;
      }
    }
    // Moved after the walk, so that no record goes twice in one datagram.
    for (const entry of moved) {
      entry.transmits += counted;
      this.#place(entry);
    }
    this.#sweep();
    return taken;
  }

  /** Puts `entry` at the end of the bucket of its transmissions, under a new ticket. */
  #place(entry: Entry): void {
    while (this.#buckets.length <= entry.transmits) {
      this.#buckets.push([]);
      this.#tickets.push([]);
      this.#heads.push(0);
    }
    entry.ticket = ++this.#ticket;
    this.#buckets[entry.transmits].push(entry);
    this.#tickets[entry.transmits].push(entry.ticket);
  }

  /** Marks `entry`'s place not queued: its bucket skips it from now on. */
  #unplace(entry: Entry): void {
    entry.ticket = 0;
    this.#stale++;
  }

  /**
   * Left behind a head that cannot move (a record that never fits, say),
   * places no longer queued would pile up: past the live ones, they go.
   */
  #sweep(): void {
    if (this.#stale <= 2 * this.#where.size + 64) return;
    this.#stale = 0;
    for (let t = 0; t < this.#buckets.length; t++) {
      const bucket: Entry[] = [];
      const tickets: number[] = [];
      const from = this.#tickets[t];
      this.#buckets[t].forEach((entry, i) => {
        if (entry.ticket !== from[i]) return;
        bucket.push(entry);
        tickets.push(from[i]);
      });
      this.#buckets[t] = bucket;
      this.#tickets[t] = tickets;
      this.#heads[t] = 0;
    }
  }
}
