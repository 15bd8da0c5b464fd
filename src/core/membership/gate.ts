/**
 * The reflection gate. Every datagram names the address its answers go to,
 * and without signing anyone can write someone else's there; a node that
 * answered and probed whatever address it was told would send a stranger
 * many times what the forger spent. So, until an address has shown that it
 * receives there, this node sends it no more bytes than datagrams naming it
 * brought, in all; what does not fit is withheld and counted.
 *
 * An address shows it receives by answering a ping with the ping's sequence
 * number, drawn at random, from that address. A proven helper's relayed ack
 * for a probe of it counts as bytes sent in its name (the helper spent them),
 * so members that only heard of each other by rumour can start talking; the
 * direct probe that follows proves the address. The other way round, a
 * helper's ping names the member it probes for, and counts as bytes sent in
 * that member's name too: the target challenges it at once, and the two
 * prove each other a round of probes sooner. One datagram so pays for as
 * much to its sender and to the member it names, never more to either.
 *
 * Proof opens an address to news, not to answers larger than what asked
 * for them: anyone can write a member's or a seed's address into a
 * datagram as well. A page answers a join only when it is no larger than
 * the join (joiners pad theirs in full), and an ack takes at most
 * `ANSWER_FACTOR` times the ping it answers. Only the first answer to an
 * address after it opens goes in full, whatever it answers: often the ack
 * of a member that proved this node to one that has not yet proven it,
 * whose ping is lean and whose answer is the news it lacks (capped too, a
 * fleet of 200 formed 15% slower). A request to probe (a ping-req) buys
 * the same: the helper's ping to the target, and the ack or nack it passes
 * back to the requester, each take at most `ANSWER_FACTOR` times the
 * request, and never count as that first answer. While news waits,
 * requesters pad their requests to half a datagram, so a helper's news (a
 * seed's, which met every joiner, most of all) goes in full as before
 * (capped, 200 members formed 4% slower; capped and taken as first
 * answers, one fleet in twelve took 10.6 s); an unpadded forged one buys
 * twice its bytes. A request to probe its own sender is refused. So forged joins, pings and ping-reqs in any address's name get it at
 * most their bytes, twice and twice their bytes, plus that one datagram
 * from each node.
 *
 * Bounded: `maxProven` proven addresses, `MAX_UNPROVEN` credits,
 * `MAX_CHALLENGES` pings awaiting their ack (and as many times they went)
 * and twice `maxProven` addresses answered in full, each dropping its
 * oldest entry when full. A forgotten credit only withholds more; a
 * forgotten answer allows one more in full.
 *
 * @module
 */

/** An ack takes at most this many times the bytes of the ping it answers (see above). */
export const ANSWER_FACTOR = 2;

/** Unproven addresses whose credit is remembered. */
export const MAX_UNPROVEN = 4_096;

/** Pings to unproven addresses whose ack would prove them. */
const MAX_CHALLENGES = 1_024;

/** One node's gate. */
export class Gate {
  readonly #proven = new Set<string>();
  /** Bytes received in an unproven address's name and not yet spent on it. */
  readonly #credit = new Map<string, number>();
  /** Ping sequence number → the unproven address it went to. */
  readonly #challenges = new Map<number, string>();
  /** Unproven address → when the last ping that would prove it went. */
  readonly #challengedAtMs = new Map<string, number>();
  /** Open addresses (proven, or seeds) this node has answered once in full. */
  readonly #answered = new Set<string>();
  readonly #maxProven: number;
  #withheldDatagrams = 0;
  #withheldBytes = 0;
  #provenChanges = 0;

  /** @param maxProven Proven addresses kept: the member table's size is enough. */
  constructor(maxProven: number) {
    this.#maxProven = maxProven;
  }

  /** Datagrams withheld for want of credit. */
  get withheldDatagrams(): number {
    return this.#withheldDatagrams;
  }

  /** Bytes of the datagrams withheld. */
  get withheldBytes(): number {
    return this.#withheldBytes;
  }

  /** Whether `key` has shown it receives at its address. */
  isProven(key: string): boolean {
    return this.#proven.has(key);
  }

  /** Counts the changes to the addresses proven: what was read of them holds while it stays. */
  get provenChanges(): number {
    return this.#provenChanges;
  }

  /** How many addresses are proven. */
  get provenCount(): number {
    return this.#proven.size;
  }

  /** Every address proven, as its key. */
  proven(): IterableIterator<string> {
    return this.#proven.keys();
  }

  /** Bytes this node may still send `key`: Infinity once proven. */
  room(key: string): number {
    return this.#proven.has(key) ? Infinity : this.#credit.get(key) ?? 0;
  }

  /** `bytes` arrived in the name of `key` (or were spent for it by a proven helper). */
  credit(key: string, bytes: number): void {
    if (this.#proven.has(key)) return;
    const credit = this.#credit.get(key);
    if (credit === undefined) keepRoom(this.#credit, MAX_UNPROVEN);
    this.#credit.set(key, (credit ?? 0) + bytes);
  }

  /**
   * Sends `bytes` to `key` if there is room, charging an unproven address.
   *
   * @returns Whether they may go.
   */
  spend(key: string, bytes: number): boolean {
    if (this.#proven.has(key)) return true;
    const credit = this.#credit.get(key) ?? 0;
    if (bytes > credit) {
      this.withhold(bytes);
      return false;
    }
    this.#credit.set(key, credit - bytes);
    return true;
  }

  /**
   * Whether an answer to open `key` may go in full, whatever it answers:
   * the first after it opens, and no other until it is forgotten.
   */
  firstAnswer(key: string): boolean {
    if (this.#answered.has(key)) return false;
    keepRoom(this.#answered, 2 * this.#maxProven);
    this.#answered.add(key);
    return true;
  }

  /** Counts a datagram that was not sent. */
  withhold(bytes: number): void {
    this.#withheldDatagrams++;
    this.#withheldBytes += bytes;
  }

  /** A ping with sequence number `seq` goes to unproven `key` at `nowMs`: its ack would prove it. */
  challenge(seq: number, key: string, nowMs: number): void {
    if (this.#proven.has(key)) return;
    this.#challenges.delete(seq);
    keepRoom(this.#challenges, MAX_CHALLENGES);
    this.#challenges.set(seq, key);
    this.#challengedAtMs.delete(key);
    keepRoom(this.#challengedAtMs, MAX_CHALLENGES);
    this.#challengedAtMs.set(key, nowMs);
  }

  /** When the last ping that would prove unproven `key` went, if one is remembered. */
  challengedAtMs(key: string): number | undefined {
    return this.#challengedAtMs.get(key);
  }

  /** An ack of `seq` came from `key`: proven, if that is where the ping went. */
  acked(seq: number, key: string): void {
    if (this.#challenges.get(seq) !== key) return;
    this.#challenges.delete(seq);
    this.#challengedAtMs.delete(key);
    this.#credit.delete(key);
    this.#proven.delete(key);
    keepRoom(this.#proven, this.#maxProven);
    this.#proven.add(key);
    this.#provenChanges++;
  }

  /** `key` is gone (dead, departed, forgotten): whoever is there next proves itself anew. */
  forget(key: string): void {
    if (this.#proven.delete(key)) this.#provenChanges++;
    this.#answered.delete(key);
    this.#challengedAtMs.delete(key);
  }
}

/** Drops the oldest entries of `entries` until one more fits within `max`. */
function keepRoom(entries: Map<unknown, unknown> | Set<unknown>, max: number): void {
  for (const key of entries.keys()) {
    if (entries.size < max) return;
    entries.delete(key);
  }
}
