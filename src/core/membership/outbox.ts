/**
 * What a node sends, through the reflection gate (`gate.ts`): to a seed or a
 * proven address as composed, but answers no larger than what they answer
 * allows, to any other only lean datagrams that fit in what it sent, the
 * rest withheld. Also the pings that prove an address, and
 * which members may go unasked or help with an indirect probe.
 *
 * @module
 */

import { type Address, MAX_MESSAGE_BYTES, type Sender } from "../../proto/mod.ts";
import { MESSAGE_SECTION_HEADER_BYTES } from "../../proto/codec.ts";
import type { Composer } from "./compose.ts";
import { ANSWER_FACTOR, type Gate } from "./gate.ts";
import type { SendFields } from "./prober.ts";
import type { Member } from "./table.ts";

/** What a request to probe is padded to while news waits (see `send`). */
const PING_REQ_PAD_BYTES = Math.ceil(MAX_MESSAGE_BYTES / ANSWER_FACTOR);

/** A datagram the node wants sent. */
export interface Transmit {
  /** Where to. */
  readonly to: Address;
  /** What, at most `MAX_DATAGRAM_BYTES` once signed. */
  readonly bytes: Uint8Array;
}

/** How a datagram is composed, besides its fields. */
export interface SendOptions {
  /** What `to` claimed of itself, when answering it. */
  readonly peer?: Sender;
  /** Length to pad to, to pay for the answer: a join, in full, by default. */
  readonly padTo?: number;
  /** Bytes of the ping this ack answers: it takes at most `ANSWER_FACTOR` times as many. */
  readonly paidBytes?: number;
  /**
   * Sent for a request to probe (`paidBytes` its bytes): the ping to the
   * target, or the ack or nack to the requester. It never goes in full as
   * an address's first answer: that is the news a member proven lacks,
   * not what a request in someone else's name may buy.
   */
  readonly relayed?: boolean;
  /**
   * A member whose record goes first, after `to`'s own: the target of the
   * probe a relayed ack answers for (see `Prober.acked`).
   */
  readonly target?: Address;
  /**
   * Composed lean whoever `to` is, as to an address not proven: what this
   * node believes of `to` and of `target`, nothing more: a look's ping
   * (see `Prober`), which carries the suspicion to a suspect that may well be cut off.
   */
  readonly lean?: boolean;
}

/** What the outbox reads from its node. */
export interface OutboxParts {
  readonly gate: Gate;
  readonly composer: Composer;
  /** Whether the operator named `address` a seed. */
  readonly isSeed: (address: Address) => boolean;
  /** A fresh, random ping sequence number. */
  readonly nextSeq: () => number;
  /** How long an ack may take: no second ping to prove an address goes sooner. */
  readonly probeTimeoutMs: number;
  /** Whether news of members waits to be piggybacked. */
  readonly newsPending: () => boolean;
}

/** One node's queue of datagrams to send. */
export class Outbox {
  readonly #parts: OutboxParts;
  readonly #queue: Transmit[] = [];
  #head = 0;
  #barePingBytes: number | undefined;

  /** @param parts The node's state the outbox reads. */
  constructor(parts: OutboxParts) {
    this.#parts = parts;
  }

  /**
   * Composes `fields` for `to` and queues them, if they may go. An answer
   * (`paidBytes` given) takes at most `ANSWER_FACTOR` times what it answers,
   * whoever `to` is, a seed or a proven member too, but for the first to
   * each address once open (`gate.ts`).
   */
  send(nowMs: number, to: Address, fields: SendFields, options: SendOptions = {}): void {
    const { gate, composer } = this.#parts;
    const { peer, paidBytes, target } = options;
    const padTo = options.padTo ?? this.#padTo(fields.type);
    const key = to.toString();
    const open = this.#open(to, key);

    const inFull = paidBytes === undefined ||
      (open && !options.relayed && gate.firstAnswer(key));
    const answerBytes = inFull ? Infinity : ANSWER_FACTOR * paidBytes;
    const maxBytes = open ? answerBytes : Math.min(gate.room(key), answerBytes);
    const limits = { peer, padTo, maxBytes, lean: !open || options.lean, target };
    const bytes = composer.compose(nowMs, to, fields, limits);
    if (!bytes) {
      gate.withhold(composer.bareSize(fields));
      return;
    }
    if (!open && fields.type === "ping") gate.challenge(fields.seq, key, nowMs);
    this.transmit(to, bytes, open);
  }

  /**
   * Queues `page` for `to` in answer to a join of `paidBytes`, if it takes
   * no more: joiners pad their joins to pay for the page, so only a forged
   * join, unpadded, is refused, and counted.
   */
  answerJoin(to: Address, page: Uint8Array, paidBytes: number): void {
    if (page.length > paidBytes) {
      this.#parts.gate.withhold(page.length);
      return;
    }
    this.transmit(to, page);
  }

  /**
   * A lean ping to `address`, whose member this node holds dead, past the
   * gate's credit: the bare ping and this node's record of the member, at
   * the pace and to the addresses `reconnect.ts` allows (about one a period
   * in a whole fleet, to addresses proven before their member died). A
   * challenge, so that its ack proves the address again.
   */
  reconnect(nowMs: number, address: Address, seq: number): void {
    const bytes = this.#parts.composer.compose(nowMs, address, { type: "ping", seq }, {
      lean: true,
    });
    if (!bytes) return;
    this.#parts.gate.challenge(seq, address.toString(), nowMs);
    this.#queue.push({ to: address, bytes });
  }

  /** Queues `bytes` for `to`, unless `to` is neither open nor has credit for them. */
  transmit(to: Address, bytes: Uint8Array, open = this.#open(to, to.toString())): void {
    if (open || this.#parts.gate.spend(to.toString(), bytes.length)) {
      this.#queue.push({ to, bytes });
    }
  }

  /**
   * Pings `address` to prove it, if it is not proven, no such ping to it
   * awaits its ack, and what it sent pays for a ping. Padded, when there is
   * credit, to pay for a ping back: two members that only heard of each
   * other prove each other in one exchange. A helper's relayed ack and the
   * target's own challenge (`gate.ts`) come at once: answered with a ping
   * each, a fleet of 200 forming sent a third more datagrams.
   */
  challenge(nowMs: number, address: Address): void {
    const key = address.toString();
    if (this.#open(address, key)) return;
    const lastMs = this.#parts.gate.challengedAtMs(key);
    if (lastMs !== undefined && nowMs - lastMs < this.#parts.probeTimeoutMs) return;
    const bare = this.#barePing();
    if (this.#parts.gate.room(key) < bare) return;
    const seq = this.#parts.nextSeq();
    this.send(nowMs, address, { type: "ping", seq }, {
      padTo: 2 * bare + MESSAGE_SECTION_HEADER_BYTES,
    });
  }

  /** Whether a bare ping may go to `member`: a seed, proven, or paid for. */
  reachable(member: Member): boolean {
    return this.#parts.isSeed(member.address) ||
      this.#parts.gate.room(member.key) >= this.#barePing();
  }

  /** 2 for a seed, which met every joiner; 1 for a proven member; 0 for one not to ask. */
  helperRank(member: Member): number {
    if (this.#parts.isSeed(member.address)) return 2;
    return Number(this.#parts.gate.isProven(member.key));
  }

  /** The next datagram to send, if any. */
  poll(): Transmit | undefined {
    if (this.#head === this.#queue.length) return undefined;
    const transmit = this.#queue[this.#head++];
    if (this.#head === this.#queue.length) {
      this.#queue.length = 0;
      this.#head = 0;
    }
    return transmit;
  }

  /**
   * Seeds are open: the operator named them, and what goes to them is
   * bounded by the protocol's own pace (a join a period while alone, one
   * every `seedIntervalMs` after), not by what anyone else writes.
   */
  #open(address: Address, key: string): boolean {
    return this.#parts.isSeed(address) || this.#parts.gate.isProven(key);
  }

  /**
   * What a datagram of `type` is padded to, to pay for its answer: a join
   * for a page in full; a request to probe, while news waits, to half a
   * datagram, so that the helper's ping and the ack it passes back (each
   * at most `ANSWER_FACTOR` times the request) carry the helper's news in
   * full while a fleet forms or changes. A settled fleet's requests go
   * bare: at 200 members, padded, they were a third of its bytes.
   */
  #padTo(type: SendFields["type"]): number {
    if (type === "join") return MAX_MESSAGE_BYTES;
    return type === "pingReq" && this.#parts.newsPending() ? PING_REQ_PAD_BYTES : 0;
  }

  #barePing(): number {
    // The same for every ping of this node (its incarnation takes four bytes
    // whatever it is), and asked of every probe and every datagram received.
    return this.#barePingBytes ??= this.#parts.composer.bareSize({ type: "ping", seq: 0 });
  }
}
