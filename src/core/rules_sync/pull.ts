/**
 * One paged transfer of a peer's rule table, on the puller's side: which
 * slot it has reached, what arrived ahead of it, and when to ask again.
 * Each request is answered by at most {@link PAGES_PER_PULL} pages, each
 * in a datagram of its own, so one request costs its answerer a bounded
 * number of bytes, and only members are answered at all; the first, which
 * has no ticket yet, by one page (`serve.ts`).
 *
 * @module
 */

import type { Address } from "../../proto/mod.ts";
import { NO_TICKET, type Page, type Ticket } from "./wire.ts";

/** Pages that answer one request. */
export const PAGES_PER_PULL = 4;
/** Requests sent again without progress before the transfer gives up on its peer. */
const MAX_RETRIES = 5;

/** See the module doc. */
export class Pull {
  /** The peer's address. */
  readonly peer: Address;
  /** Whether it is the newcomer's transfer, which holds the member until done. */
  readonly learning: boolean;
  /** The slot every page before which has arrived. */
  cursor = 0;
  /** Slots in the peer's table, as its last page said. */
  end = Infinity;
  /** What the peer's pages said the requests to it are to carry (`serve.ts`). */
  ticket: Ticket = NO_TICKET;
  /** Pages of the last request not yet arrived. */
  #awaited = 0;
  /** Pages that arrived ahead of the cursor: from → next. */
  readonly #ahead = new Map<number, number>();
  #askedAtMs = -Infinity;
  #retries = 0;

  /**
   * @param peer Whom to pull from.
   * @param learning Whether it is a newcomer's transfer.
   */
  constructor(peer: Address, learning: boolean) {
    this.peer = peer;
    this.learning = learning;
  }

  /** Whether every slot has arrived. */
  get done(): boolean {
    return this.cursor >= this.end;
  }

  /** Whether it retried too often without progress: the peer is not answering. */
  get failed(): boolean {
    return this.#retries > MAX_RETRIES;
  }

  /**
   * The slot to ask for now, if a request is due: none is out, or the last
   * went unanswered for `retryMs`.
   *
   * @param nowMs The time, ms.
   * @param retryMs How long an unanswered request waits.
   * @returns The slot to ask from, or undefined.
   */
  due(nowMs: number, retryMs: number): number | undefined {
    if (this.done) return undefined;
    if (this.#awaited > 0 && nowMs - this.#askedAtMs < retryMs) return undefined;
    if (this.#awaited > 0) {
      this.#retries++;
      // The peer may have restarted, with tickets of a new key: pay again.
      this.ticket = NO_TICKET;
    }
    this.#awaited = this.ticket === NO_TICKET ? 1 : PAGES_PER_PULL;
    this.#askedAtMs = nowMs;
    return this.cursor;
  }

  /**
   * A page from the peer arrived (its entries already merged).
   *
   * @param page The page.
   */
  arrived(page: Page): void {
    this.#awaited = Math.max(0, this.#awaited - 1);
    this.end = page.end;
    if (page.ticket.hi !== 0 || page.ticket.lo !== 0) this.ticket = page.ticket;
    if (page.from > this.cursor) {
      this.#ahead.set(page.from, page.next);
      return;
    }
    if (page.next > this.cursor) {
      this.cursor = page.next;
      this.#retries = 0;
    }
    for (
      let next = this.#ahead.get(this.cursor);
      next !== undefined;
      next = this.#ahead.get(this.cursor)
    ) {
      this.#ahead.delete(this.cursor);
      this.cursor = Math.max(this.cursor, next);
    }
    // A page that moved nothing, last of its answer: the answer is spent.
    if (page.next === page.from && page.next < page.end) this.#awaited = 0;
  }

  /** Whether every page of the last request arrived: the next may go at once. */
  get answered(): boolean {
    return this.#awaited === 0;
  }
}
