/**
 * The answering side of paged transfer, and why it reflects nothing.
 *
 * A page request names the address its pages go to, and unsigned anyone
 * can write a live member's address there: answered in full, a request of
 * about 60 bytes would send that member about 5,000 (four pages), as often
 * as a forger likes. So a request is answered in full only when it carries
 * the **ticket** this member draws for the requester's address (a keyed
 * hash of it, under a key only this member holds), which only pages sent to
 * that address carry: whoever has it receives there. A request without it
 * is answered only when it pays for its answer, padded to a page's size
 * (`wire.ts`'s pad part), and then with one page of no more bytes than it
 * brought, sent with no piggybacked records, ticket included. Any other is
 * dropped and counted. A transfer costs its puller one padded request; a
 * forger gets the member it names no more bytes than it sent in its name.
 *
 * @module
 */

import type { Address } from "../../proto/mod.ts";
import { type HashKey, sipHashBytes, utf8Bytes } from "../hash.ts";
import type { RuleTable } from "./table.ts";
import { PAGES_PER_PULL } from "./pull.ts";
import {
  type Digest,
  PAGE_HEADER_BYTES,
  type PullRequest,
  RULES_HEADER_BYTES,
  SectionWriter,
  type Ticket,
} from "./wire.ts";

/** Page answers owed at once; a request beyond them is dropped, and its puller asks again. */
const MAX_OWED = 16;
/**
 * What an answer's datagram may take beyond its request's for the same
 * section: the answerer's sender record may be longer than the one a
 * forger wrote (an IPv6 address, a life), so an unticketed answer's page
 * is this much smaller than its request.
 */
const SENDER_SLACK_BYTES = 64;

/** A datagram of rule sharing to send on its own. */
export interface RulesSend {
  /** To whom: a live member. */
  readonly to: Address;
  /** The rules section. */
  readonly bytes: Uint8Array;
  /** Whether it goes with no piggybacked records, so that it takes no more than its request did. */
  readonly bare: boolean;
}

interface Owed {
  readonly to: Address;
  readonly from: number;
  /** Bytes of the page answering an unticketed request; undefined: a ticketed one, answered in full. */
  readonly paidBytes: number | undefined;
}

/** See the module doc. */
export class PageServer {
  readonly #key: HashKey;
  readonly #datagramBytes: number;
  readonly #owed: Owed[] = [];
  #unproven = 0;

  /**
   * @param key The key tickets are drawn under: random, held only here.
   * @param datagramBytes The most a rules section of its own takes.
   */
  constructor(key: HashKey, datagramBytes: number) {
    this.#key = key;
    this.#datagramBytes = datagramBytes;
  }

  /** Requests dropped: neither their address's ticket nor padded to pay for a page. */
  get unproven(): number {
    return this.#unproven;
  }

  /** The ticket of `address`'s requests here; never {@link NO_TICKET}. */
  ticketFor(address: Address): Ticket {
    const h = sipHashBytes(this.#key, utf8Bytes(address.toString()), 2, 4);
    const hi = Number(h >> 32n), lo = Number(h & 0xffffffffn);
    return hi === 0 && lo === 0 ? { hi: 0, lo: 1 } : { hi, lo };
  }

  /**
   * A live member's request, in a rules section of `sectionBytes`: owed in
   * full with its ticket, one page as large as it paid for without.
   */
  request(to: Address, pull: PullRequest, sectionBytes: number): void {
    const ticket = this.ticketFor(to);
    const ticketed = pull.ticket.hi === ticket.hi && pull.ticket.lo === ticket.lo;
    const paidBytes = Math.min(sectionBytes, this.#datagramBytes) - SENDER_SLACK_BYTES;
    const pays = paidBytes >= RULES_HEADER_BYTES + PAGE_HEADER_BYTES + 64;
    if (!ticketed && !pays) {
      this.#unproven++;
      return;
    }
    if (this.#owed.length >= MAX_OWED) return;
    this.#owed.push({ to, from: pull.from, paidBytes: ticketed ? undefined : paidBytes });
  }

  /**
   * Answers what is owed: a ticketed request with up to
   * {@link PAGES_PER_PULL} pages, an unticketed one with one page of what it paid.
   */
  answer(table: RuleTable, learning: boolean, digest: Digest, send: (s: RulesSend) => void): void {
    for (let owed = this.#owed.shift(); owed; owed = this.#owed.shift()) {
      const ticket = this.ticketFor(owed.to);
      const bare = owed.paidBytes !== undefined;
      let from = owed.from;
      for (let i = 0; i < (bare ? 1 : PAGES_PER_PULL); i++) {
        const writer = new SectionWriter(owed.paidBytes ?? this.#datagramBytes, learning, digest);
        const page = table.page(from, writer.room - PAGE_HEADER_BYTES);
        writer.page({ ...page, ticket });
        send({ to: owed.to, bytes: writer.finish(), bare });
        if (page.next >= page.end) break;
        from = page.next;
      }
    }
  }
}
