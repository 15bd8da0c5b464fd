/**
 * What a node says of itself: its life, its incarnation, the sender it puts
 * on every datagram, and the refutation of news about it. Only the member
 * itself raises its incarnation, and only to refute: a suspicion or death
 * of its own, or an alive record of its address that another life made
 * (the process before this one, as memberlist's `aliveNode` refutes a
 * restart). A refutation goes at once to whoever brought the news and to a
 * few members at random, rather than waiting for the next probes.
 *
 * @module
 */

import type { Address, MemberRecord, Message, Sender } from "../../proto/mod.ts";
import { Prng } from "../prng.ts";
import type { SendFields } from "./prober.ts";
import { MAX_INCARNATION, type Member, otherLife } from "./table.ts";

/** Mixed into the seed for the stream a life is drawn from, apart from the node's other choices. */
const LIFE_STREAM = 0x6c696665;

/** What a node's own record reads from its node and sends through it. */
export interface SelfHost {
  /** Sends a message, with piggybacked news, to `to`. */
  send(nowMs: number, to: Address, fields: SendFields): void;
  /** Every member held. */
  members(): Iterable<Member>;
  /** Whether a datagram to `member` now carries news (see `gate.ts`). */
  reachable(member: Member): boolean;
  /** This node was told it is suspect: its local health is worse. */
  suspected(): void;
  /** News of this node to piggyback. */
  announce(record: MemberRecord): void;
}

/** One node's word of itself. */
export class SelfRecord {
  readonly #address: Address;
  readonly #life: number;
  readonly #prng: Prng;
  readonly #fanout: number;
  readonly #host: SelfHost;
  #incarnation = 0;
  #senderNow: Sender | undefined;
  #identityConflicts = 0;

  /**
   * @param address This node's advertised address.
   * @param options The node's seed (its life is drawn from it), the node's
   *   random stream, the members a refutation goes to besides its teller,
   *   and the node.
   */
  constructor(
    address: Address,
    options: { seed: number; prng: Prng; fanout: number; host: SelfHost },
  ) {
    this.#address = address;
    this.#prng = options.prng;
    this.#fanout = options.fanout;
    this.#host = options.host;
    // Drawn from a stream of its own, so that the node's other random
    // choices are what they would be without it. Never 0, which is no life.
    this.#life = new Prng((options.seed ^ LIFE_STREAM) >>> 0).nextU32() || 1;
  }

  /** This node's incarnation. */
  get incarnation(): number {
    return this.#incarnation;
  }

  /** Which life of a member at this address this node is. */
  get life(): number {
    return this.#life;
  }

  /** Times this node outbid an alive record of itself that it did not make. */
  get identityConflicts(): number {
    return this.#identityConflicts;
  }

  /** The sender of every datagram this node composes. */
  sender(): Sender {
    // Asked for every datagram composed: made again only when the incarnation moved.
    if (this.#senderNow?.incarnation !== this.#incarnation) {
      this.#senderNow = {
        id: this.#address.id,
        address: this.#address,
        incarnation: this.#incarnation,
        life: this.#life,
      };
    }
    return this.#senderNow;
  }

  /**
   * Takes news of this node; refutes it when it must.
   *
   * @returns Whether it refuted (raised its incarnation).
   */
  hear(record: MemberRecord): boolean {
    if (record.incarnation < this.#incarnation) return false;
    if (record.state === "alive") {
      // Its own news, unless another life of this address said it: the
      // process before this one, whose word must be outbid (memberlist's
      // aliveNode refutes a restart the same way).
      const mine = !otherLife(record.life, this.#life);
      if (record.incarnation === this.#incarnation && mine) return false;
      this.#identityConflicts++;
    } else if (record.state === "suspect") {
      this.#host.suspected();
    }
    // An attacker's u32 maximum cannot be outbid; staying at it is the best
    // there is, and there the member's own word wins (see MemberTable).
    this.#incarnation = Math.min(record.incarnation + 1, MAX_INCARNATION);
    this.#host.announce({ state: "alive", ...this.sender() });
    return true;
  }

  /**
   * Sends a fresh refutation at once to whoever brought the news and to a
   * few members at random: waiting for the next probes would leave it to a
   * node whose awareness may have slowed them down ninefold, while the
   * suspicion timeouts run on.
   */
  spread(nowMs: number, cause: Message): void {
    const teller = cause.sender.address;
    // A ping or a join is answered anyway, and the answer carries the news.
    if (cause.type !== "ping" && cause.type !== "join") {
      this.#host.send(nowMs, teller, { type: "gossip" });
    }
    // Members it can reach: a lean datagram to one it has not proven
    // carries no news, so a refutation sent there went nowhere.
    const others = [...this.#host.members()].filter(
      (m) => m.state === "alive" && !m.address.equals(teller) && this.#host.reachable(m),
    );
    for (const member of this.#prng.shuffle(others).slice(0, this.#fanout)) {
      this.#host.send(nowMs, member.address, { type: "gossip" });
    }
  }
}
