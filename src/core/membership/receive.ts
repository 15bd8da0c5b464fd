/**
 * A datagram taken by a node: decoded and its sender checked (an ID that is
 * not its address's is refused), the sender's word of itself and the news
 * it carries applied, the extension's and the rules' sections handed on,
 * and then each message type's answer: an ack for a ping, a probe's end for
 * an ack or a nack, a helper's probe for a request to probe, a page of
 * members for a join, the next page asked for a page.
 *
 * @module
 */

import {
  type Address,
  decode,
  type MemberRecord,
  type Message,
  type Sender,
} from "../../proto/mod.ts";
import type { Composer } from "./compose.ts";
import type { MembershipExtension } from "./extension.ts";
import type { Gate } from "./gate.ts";
import type { Join } from "./join.ts";
import type { Outbox } from "./outbox.ts";
import type { Prober } from "./prober.ts";
import type { MemberNews } from "./news.ts";
import type { SelfRecord } from "./self.ts";

/** What a node's receiver reads and drives. */
export interface ReceiverParts {
  readonly address: Address;
  readonly self: SelfRecord;
  readonly gate: Gate;
  readonly prober: Prober;
  readonly outbox: Outbox;
  readonly composer: Composer;
  readonly join: Join;
  readonly extension: MembershipExtension | undefined;
  /** Where the news it carries goes. */
  readonly news: MemberNews;
}

/** One node's handling of the datagrams it takes. */
export class Receiver {
  readonly #parts: ReceiverParts;
  #malformed = 0;
  #mismatched = 0;
  #skippedSections = 0;
  #corrections = 0;

  /** @param parts The node's state the receiver reads and drives. */
  constructor(parts: ReceiverParts) {
    this.#parts = parts;
  }

  /** Datagrams refused: undecodable, or a sender whose ID is not its address's. */
  get malformed(): number {
    return this.#malformed;
  }

  /** Records dropped because their ID is not their address's. */
  get mismatched(): number {
    return this.#mismatched;
  }

  /** Sections of kinds this version does not know, skipped. */
  get skippedSections(): number {
    return this.#skippedSections;
  }

  /** Stale suspicions and deaths whose sender was told the member's newer record. */
  get corrections(): number {
    return this.#corrections;
  }

  /** Takes a datagram: its news, then its answer. */
  take(nowMs: number, bytes: Uint8Array): void {
    const { address, self, gate, outbox, extension, news } = this.#parts;
    const decoded = decode(bytes);
    if (!decoded.ok || !decoded.value.sender.id.equals(decoded.value.sender.address.id)) {
      this.#malformed++;
      return;
    }
    const message = decoded.value;
    this.#skippedSections += decoded.skippedSections ?? 0;
    const { sender } = message;
    if (sender.address.equals(address)) {
      self.hear(aliveRecord(sender));
      return;
    }
    gate.credit(sender.address.toString(), bytes.length);
    // The sender's word of itself first (its ID was checked above), then its news.
    let refuted = news.apply(aliveRecord(sender), nowMs, true) === "refuted";
    // One correction a datagram at most: a sender behind on several
    // members sends more, and hears of the others then.
    let correction: Address | undefined;
    for (const record of message.records) {
      if (!record.id.equals(record.address.id)) {
        this.#mismatched++;
        continue;
      }
      const applied = news.apply(record, nowMs);
      if (applied === "refuted") refuted = true;
      else if (applied === "stale" && !correction) correction = news.correction(nowMs, record);
    }
    if (message.extension) extension?.incoming?.(nowMs, sender, message.extension);
    if (message.rules) extension?.incomingRules?.(nowMs, sender, message.rules);
    const requester = this.#requesterOf(message);
    if (requester) gate.credit(requester.toString(), bytes.length);
    this.#dispatch(nowMs, message, bytes.length, correction);
    outbox.challenge(nowMs, sender.address);
    if (requester) outbox.challenge(nowMs, requester);
    if (refuted) self.spread(nowMs, message);
  }

  /**
   * The address a helper's ping probes for, if it is one and names another
   * member's own address: the datagram brought its bytes in that member's
   * name too (see `gate.ts`).
   */
  #requesterOf(message: Message): Address | undefined {
    if (message.type !== "ping" || !message.requester) return undefined;
    const { id, address } = message.requester;
    if (!id.equals(address.id)) {
      this.#mismatched++;
      return undefined;
    }
    if (address.equals(this.#parts.address) || address.equals(message.sender.address)) {
      return undefined;
    }
    return address;
  }

  /**
   * Answers `message`, and tells its sender of the member `correction`
   * names (`MemberNews.correction`), as an answer too, since its sender
   * may be forged (`gate.ts`): on the ack a ping gets anyway, or on a
   * gossip of its own of at most `ANSWER_FACTOR` times the datagram; never
   * on a request to probe or a join, whose answers take what they paid
   * for. On a gossip of its own after a ping, 2,000 forged pings carrying
   * a stale suspicion in a member's name got it 2.8 times their bytes
   * (`tests/sim/amplification_test.ts`).
   */
  #dispatch(nowMs: number, message: Message, size: number, correction?: Address): void {
    const { gate, prober, outbox, composer, join } = this.#parts;
    const to = message.sender.address;
    const peer = message.sender;
    if (correction && message.type !== "pingReq" && message.type !== "join") {
      this.#corrections++;
      if (message.type !== "ping") {
        outbox.send(nowMs, to, { type: "gossip" }, { paidBytes: size, target: correction });
      }
    }
    switch (message.type) {
      case "ping": {
        const target = correction;
        outbox.send(nowMs, to, { type: "ack", seq: message.seq }, {
          peer,
          paidBytes: size,
          target,
        });
        return;
      }
      case "ack": {
        gate.acked(message.seq, to.toString());
        const target = prober.acked(nowMs, message.seq);
        // A helper's relay: it spent these bytes for the target, which may
        // be a member only heard of, so this node may now probe it directly.
        if (target && !target.address.equals(to)) {
          gate.credit(target.key, size);
          outbox.challenge(nowMs, target.address);
        }
        return;
      }
      case "nack":
        prober.nacked(message.seq);
        return;
      case "pingReq":
        if (!message.target.id.equals(message.target.address.id)) this.#mismatched++;
        else if (message.target.address.equals(to)) {
          // Nobody asks for a probe of itself: such a request would get the
          // address it names both the ping and the answer it paid for.
          gate.withhold(composer.bareSize({ type: "ping", seq: message.seq }));
        } else if (!message.target.address.equals(this.#parts.address)) {
          prober.relay(nowMs, {
            requester: { id: peer.id, address: to },
            proven: gate.isProven(to.toString()),
            seq: message.seq,
            target: message.target.address,
            paidBytes: size,
          });
        }
        return;
      case "join":
        outbox.answerJoin(to, composer.statePage(to, peer, message.page), size);
        return;
      case "state":
        join.page(nowMs, to, message);
        return;
      case "gossip":
        return;
    }
  }
}

/**
 * A sender's word of itself as a record. Written out rather than spread
 * (`{ state: "alive", ...sender }`): a spread is a native call, and every
 * datagram received makes one.
 */
function aliveRecord(sender: Sender): MemberRecord {
  const { id, address, incarnation, life } = sender;
  return life === undefined
    ? { state: "alive", id, address, incarnation }
    : { state: "alive", id, address, incarnation, life };
}
