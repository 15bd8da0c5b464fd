/**
 * The bytes of the rules section (section 5 of a datagram): a header with
 * the sender's digest of its table, then parts: changes, page requests and
 * pages. Decoding never throws; anything malformed refuses the section.
 * An entry's own bytes are `entry_wire.ts`'s.
 *
 * ```
 * header = version u8 (1) | flags u8 (bit 0: learning, bit 1: ahead) | live u32 | digest hi u32
 *          | digest lo u32
 * part   = type u8, then
 *   1 change: entry
 *   2 pull:   from u32 | ticket hi u32 | ticket lo u32
 *             (ask for the sender's slots from `from` on; ticket 0: none yet)
 *   3 page:   from u32 | next u32 | end u32 | ticket hi u32 | ticket lo u32 | count u16 | entries
 *             (the ticket is the one the receiver's requests are to carry)
 *   4 pad:    length u16 | that many bytes   (pays for an answer, see `serve.ts`)
 * ```
 *
 * Numbers are big-endian; versions and part types are append-only. A part
 * type this version does not know ends the section (the parts after it
 * cannot be told apart), so a later version adds types only at the end of
 * what it sends. Entries are read one by one: an entry that reads to its
 * end but says what its kind cannot is skipped alone. An entry of a kind
 * or value tag this version does not know cannot be read past, and cuts
 * the section there: a later version sends new kinds and tags only inside
 * a part type of its own, which 0.2 stops at. Version 1 is pinned by
 * `tests/fixtures/wire/0.2/` (see `proto/codec.ts`).
 *
 * @module
 */

import { MAX_MESSAGE_BYTES } from "../../proto/mod.ts";
import { Reader, Writer } from "../../proto/cursor.ts";
import type { RuleEntry } from "./entry.ts";
import { entrySize, readEntry, writeEntry } from "./entry_wire.ts";

/** The rules section's version, its first byte. */
export const RULES_WIRE_VERSION = 1;
/** Bytes of the header. */
export const RULES_HEADER_BYTES = 14;
/** Bytes of a page part before its entries. */
export const PAGE_HEADER_BYTES = 23;
/** Bytes of a pull part. */
export const PULL_BYTES = 13;
/** Bytes of a pad part with nothing in it. */
export const PAD_BYTES = 3;
/** Bytes of the rules section of a datagram of its own (a page, a request). */
export const RULES_DATAGRAM_BYTES = MAX_MESSAGE_BYTES - 160;
/** The largest entry shared: it must fit in a page. */
export const MAX_ENTRY_BYTES = RULES_DATAGRAM_BYTES - RULES_HEADER_BYTES - PAGE_HEADER_BYTES;

const PART_CHANGE = 1;
const PART_PULL = 2;
const PART_PAGE = 3;
const PART_PAD = 4;
const FLAG_LEARNING = 1;
const FLAG_AHEAD = 2;

/** A digest of a table: its live entries, and the XOR of their hashes. */
export interface Digest {
  /** Live rules (removals not counted). */
  readonly live: number;
  /** High half of the XOR of every live entry's hash. */
  readonly hi: number;
  /** Low half. */
  readonly lo: number;
}

/**
 * What a member's page requests must carry to be answered in full: drawn
 * by the answerer for the requester's address, so only who receives there
 * learns it. `{0, 0}` is none.
 */
export interface Ticket {
  /** High 32 bits. */
  readonly hi: number;
  /** Low 32 bits. */
  readonly lo: number;
}

/** No ticket: a first request. */
export const NO_TICKET: Ticket = { hi: 0, lo: 0 };

/** A page request: the first slot asked for, and the requester's ticket. */
export interface PullRequest {
  /** The first slot asked for. */
  readonly from: number;
  /** The ticket the answerer gave this requester, or {@link NO_TICKET}. */
  readonly ticket: Ticket;
}

/** A page of a table: entries of slots `from` to `next`, of `end` slots. */
export interface Page {
  /** The first slot it covers. */
  readonly from: number;
  /** The slot after the last it covers. */
  readonly next: number;
  /** Slots in the sender's table when it cut the page. */
  readonly end: number;
  /** The ticket the receiver's next requests are to carry. */
  readonly ticket: Ticket;
  /** The rules in those slots. */
  readonly entries: readonly RuleEntry[];
}

/** A decoded rules section. */
export interface RulesSection {
  /** Whether the sender is still learning the table (so its digest says little). */
  readonly learning: boolean;
  /**
   * Whether the sender holds more recent changes than gossip carries in a
   * few periods: a member whose digest differs pulls its table at once.
   */
  readonly ahead: boolean;
  /** The sender's digest. */
  readonly digest: Digest;
  /** Changes it passes on. */
  readonly changes: readonly RuleEntry[];
  /** The page it asks for, if it does. */
  readonly pull?: PullRequest;
  /** A page it answers with. */
  readonly page?: Page;
  /** Why each entry skipped was (one that does not fit its kind, say): its neighbours are taken. */
  readonly refusals: readonly string[];
  /** Why the section stops short of its end, if it does: what came before is taken. */
  readonly cut?: string;
  /**
   * The type of a part this version does not know (a later version's), where
   * reading stopped: it and what follows it are skipped, what came before taken.
   */
  readonly unknownPart?: number;
}

/** Builds a section: the header, then parts as they are added. */
export class SectionWriter {
  readonly #w: Writer;

  /**
   * @param maxBytes The room; the header must fit.
   * @param learning Whether the writer is still learning.
   * @param ahead Whether it holds more recent changes than gossip carries soon (see {@link RulesSection}).
   * @param digest Its digest.
   */
  constructor(maxBytes: number, learning: boolean, digest: Digest, ahead = false) {
    const w = this.#w = new Writer(maxBytes);
    w.u8(RULES_WIRE_VERSION);
    w.u8((learning ? FLAG_LEARNING : 0) | (ahead ? FLAG_AHEAD : 0));
    w.u32(digest.live, "the digest's count");
    w.u32(digest.hi, "the digest");
    w.u32(digest.lo, "the digest");
  }

  /** Room left, bytes. */
  get room(): number {
    return this.#w.room;
  }

  /** Adds a change if it fits; returns whether it did. */
  change(entry: RuleEntry, size = entrySize(entry)): boolean {
    if (1 + size > this.room) return false;
    this.#w.u8(PART_CHANGE);
    writeEntry(this.#w, entry);
    return true;
  }

  /** Adds a page request if it fits. */
  pull(from: number, ticket: Ticket = NO_TICKET): boolean {
    if (PULL_BYTES > this.room) return false;
    const w = this.#w;
    w.u8(PART_PULL);
    w.u32(from, "a pull's start");
    w.u32(ticket.hi, "a pull's ticket");
    w.u32(ticket.lo, "a pull's ticket");
    return true;
  }

  /** Pads the section to the whole room (at least {@link PAD_BYTES} of it must be left). */
  pad(): boolean {
    const length = this.room - PAD_BYTES;
    if (length < 0) return false;
    this.#w.u8(PART_PAD);
    this.#w.u16(length, "a pad's length");
    this.#w.skip(length); // zeros
    return true;
  }

  /** Adds a page; its entries must fit (the caller sized them with `entrySize`). */
  page(page: Page): void {
    const w = this.#w;
    w.u8(PART_PAGE);
    w.u32(page.from, "a page's start");
    w.u32(page.next, "a page's next");
    w.u32(page.end, "a page's end");
    w.u32(page.ticket.hi, "a page's ticket");
    w.u32(page.ticket.lo, "a page's ticket");
    w.u16(page.entries.length, "a page's entry count");
    for (const entry of page.entries) writeEntry(w, entry);
  }

  /** The section's bytes so far. */
  finish(): Uint8Array {
    return this.#w.written();
  }
}

/**
 * Reads a rules section. Never throws. Each entry is read on its own: one
 * that does not fit its kind (or holds no limit a `Limit` can be) is
 * skipped, its reason kept in `refusals`, and its neighbours are taken. A
 * section cut short, or with a part it cannot read, keeps what came before
 * the cut (less a page cut inside, whose cursor would lie) and says why in
 * `cut`.
 *
 * @param bytes The section's body.
 * @returns The section, or undefined when its header is malformed or of another version.
 */
export function decodeRules(bytes: Uint8Array): RulesSection | undefined {
  const r = new Reader(bytes, 0);
  if (r.u8() !== RULES_WIRE_VERSION) return undefined;
  const flags = r.u8();
  const digest = { live: r.u32(), hi: r.u32(), lo: r.u32() };
  if (r.error || (flags & ~(FLAG_LEARNING | FLAG_AHEAD)) !== 0) return undefined;
  const changes: RuleEntry[] = [];
  const refusals: string[] = [];
  let pull: PullRequest | undefined;
  let page: Page | undefined;
  let cut: string | undefined;
  let unknownPart: number | undefined;
  while (cut === undefined && r.remaining > 0) {
    const type = r.u8();
    if (type === PART_CHANGE) {
      const read = readEntry(r);
      if (read === undefined) cut = "a change cut short or of an unknown kind";
      else if ("refused" in read) refusals.push(read.refused);
      else changes.push(read);
    } else if (type === PART_PULL && pull === undefined) {
      const from = r.u32();
      const ticket = { hi: r.u32(), lo: r.u32() };
      if (r.error) cut = "a page request cut short";
      else pull = { from, ticket };
    } else if (type === PART_PAD) {
      r.take(r.u16());
      if (r.error) cut = "padding cut short";
    } else if (type === PART_PAGE && page === undefined) {
      const read = readPage(r, refusals);
      if (typeof read === "string") cut = read;
      else page = read;
    } else if (type === PART_PULL || type === PART_PAGE) {
      cut = "a second page or page request";
    } else {
      unknownPart = type; // a later version's part: what follows cannot be read
      break;
    }
  }
  return {
    learning: (flags & FLAG_LEARNING) !== 0,
    ahead: (flags & FLAG_AHEAD) !== 0,
    digest,
    changes,
    refusals,
    ...(cut === undefined ? {} : { cut }),
    ...(unknownPart === undefined ? {} : { unknownPart }),
    ...(pull === undefined ? {} : { pull }),
    ...(page ? { page } : {}),
  };
}

/** A page part after its type; a string says why it cannot be read (nothing of it is taken). */
function readPage(r: Reader, refusals: string[]): Page | string {
  const from = r.u32(), next = r.u32(), end = r.u32();
  const ticket = { hi: r.u32(), lo: r.u32() };
  const count = r.u16();
  const entries: RuleEntry[] = [];
  const skipped: string[] = [];
  for (let i = 0; i < count && !r.error; i++) {
    const read = readEntry(r);
    if (read === undefined) return "a page cut short or with an entry of an unknown kind";
    if ("refused" in read) skipped.push(read.refused);
    else entries.push(read);
  }
  if (r.error) return "a page cut short";
  if (next < from || end < next) return "a page whose slots are out of order";
  refusals.push(...skipped);
  return { from, next, end, ticket, entries };
}
