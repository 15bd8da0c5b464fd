/**
 * Reconnecting to the members this node believes dead, as Serf's
 * reconnect does: the two sides of a partition declare each other dead,
 * and once the network heals nothing else sends across but the joins to
 * a seed, every `seedIntervalMs` (10 s). So every period a node tries one
 * member it holds dead, at random, with a probability of one over the
 * members it believes alive (itself included): a side of any size sends
 * about one such ping a period in all, and after a heal the sides meet
 * within a period or two. The ping is lean (the bare ping and this node's
 * record of the member, which it refutes), its ack proves the address
 * again (`gate.ts`), and from there the news goes as after any refutation.
 *
 * Only a member whose address this node had proven when it died (or a
 * seed) is tried, and only while the table keeps its record
 * (`tombstoneMs`): a stranger a forger named, never proven, is never
 * tried, and a member that left is not either. What it costs a healthy
 * fleet: nothing; a crashed member's address gets about one lean ping a
 * period from the whole fleet until its record is forgotten.
 *
 * @module
 */

import { Prng } from "../prng.ts";
import type { Member } from "./table.ts";

/**
 * Mixed into the node's seed for the rule's own stream: the node's other
 * random choices are then what they would be without it, so a fleet's
 * figures move only by what the rule sends.
 */
const RECONNECT_STREAM = 0x7265636f;

/** What reconnecting reads from its node and sends through it. */
export interface ReconnectHost {
  /** Alive and suspect members held, this node excluded. */
  live(): number;
  /**
   * Sends `member`, believed dead, a lean ping whose ack proves its
   * address, its sequence number drawn from `prng`, the rule's stream.
   */
  ping(nowMs: number, member: Member, prng: Prng): void;
}

/** One node's members to reconnect to. */
export class Reconnect {
  readonly #prng: Prng;
  readonly #host: ReconnectHost;
  /** The members that may be tried, in no order; `#at` gives each one's place. */
  readonly #members: Member[] = [];
  readonly #at = new Map<string, number>();
  /** A member held dead came back since the last try. */
  #again = false;

  /**
   * @param seed The node's seed, from which the rule draws a stream of its own.
   * @param host The node.
   */
  constructor(seed: number, host: ReconnectHost) {
    this.#prng = new Prng((seed ^ RECONNECT_STREAM) >>> 0);
    this.#host = host;
  }

  /** Members that may be tried now. */
  get size(): number {
    return this.#members.length;
  }

  /**
   * A member held dead came back by its own word (a datagram it sent,
   * whose sender outbid its death): most likely a heal, so the next
   * period's try goes whatever the draw.
   */
  cameBack(): void {
    this.#again = true;
  }

  /** `member` died while its address was proven (or a seed): it may be tried. */
  add(member: Member): void {
    if (this.#at.has(member.key)) return;
    this.#at.set(member.key, this.#members.length);
    this.#members.push(member);
  }

  /** `key` is alive again, left or forgotten: it is not tried. */
  drop(key: string): void {
    const at = this.#at.get(key);
    if (at === undefined) return;
    this.#at.delete(key);
    const last = this.#members.pop()!;
    if (at < this.#members.length) {
      this.#members[at] = last;
      this.#at.set(last.key, at);
    }
  }

  /**
   * A period's try: one member at random, with a probability of one over
   * the members this node believes alive, itself included.
   */
  tick(nowMs: number): void {
    const count = this.#members.length;
    const again = this.#again;
    this.#again = false;
    if (count === 0) return;
    if (!again && this.#prng.nextFloat() * (this.#host.live() + 1) >= 1) return;
    this.#host.ping(nowMs, this.#members[this.#prng.below(count)], this.#prng);
  }
}
