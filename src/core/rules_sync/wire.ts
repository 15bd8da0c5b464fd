/**
 * The bytes of the rules section (section 5 of a datagram): a header with
 * the sender's digest of its table, then parts: changes, page requests and
 * pages. Decoding never throws; anything malformed refuses the section.
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
 * entry  = kind u8 | clock hi u32 | clock lo u32 | origin hi u32 | origin lo u32
 *          | class length u16 | class (UTF-8) | key length u16 | key (keyLimit and block only)
 *          | value u8: 0 removed, 1 limit, 2 class-of, 3 on, 4 off, 5 blocked until
 *          | limit: count u32 | period u8 (1 s, 2 min, 3 h, 4 ms follow) | burst u32 (0: the default)
 *                   | (period 4 only) period ms hi u32 | lo u32
 *          | class-of: length u16 | name
 *          | blocked until: wall-clock ms hi u32 | lo u32
 * ```
 *
 * Numbers are big-endian; versions, kinds, part types and value tags are
 * append-only. A part type this version does not know ends the section
 * (the parts after it cannot be told apart), so a later version adds
 * types only at the end of what it sends. Entries are read one by one: an
 * entry that reads to its end but says what its kind cannot is skipped
 * alone. An entry of a kind or value tag this version does not know cannot
 * be read past, and cuts the section there: a later version sends new kinds
 * and tags only inside a part type of its own, which 0.2 stops at. Version 1
 * is pinned by `tests/fixtures/wire/0.2/` (see `proto/codec.ts`).
 *
 * @module
 */

import { KeyLimit } from "../key_limit.ts";
import { Limit } from "../limit.ts";
import { utf8Bytes, utf8Decode } from "../hash.ts";
import { Reader } from "../../proto/cursor.ts";
import {
  BlockedUntil,
  keyed,
  MAX_CLOCK,
  misfit,
  RULE_KINDS,
  type RuleEntry,
  type RuleKind,
} from "./entry.ts";

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

const PART_CHANGE = 1;
const PART_PULL = 2;
const PART_PAGE = 3;
const PART_PAD = 4;
const FLAG_LEARNING = 1;
const FLAG_AHEAD = 2;
const PERIOD_CODES = new Map<number, number>([[1_000, 1], [60_000, 2], [3_600_000, 3]]);
/** The period code of any other period (`Limit.per`): its milliseconds follow the burst. */
const PERIOD_MS_FOLLOW = 4;
const KIND_BY_NUMBER = new Map<number, RuleKind>(
  Object.entries(RULE_KINDS).map(([name, n]) => [n, name as RuleKind]),
);

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

/** Bytes an entry takes on the wire. */
export function entrySize(entry: RuleEntry): number {
  let size = 1 + 16 + 2 + utf8Bytes(entry.className).length + 1;
  if (keyed(entry.kind)) size += 2 + utf8Bytes(entry.key).length;
  if (entry.value instanceof Limit) size += PERIOD_CODES.has(entry.value.periodMs()) ? 9 : 17;
  else if (entry.value instanceof KeyLimit) size += 2 + utf8Bytes(entry.value.className).length;
  else if (entry.value instanceof BlockedUntil) size += 8;
  return size;
}

/** Builds a section: the header, then parts as they are added. */
export class SectionWriter {
  readonly #bytes: Uint8Array;
  readonly #view: DataView;
  #at = 0;

  /**
   * @param maxBytes The room; the header must fit.
   * @param learning Whether the writer is still learning.
   * @param ahead Whether it holds more recent changes than gossip carries soon (see {@link RulesSection}).
   * @param digest Its digest.
   */
  constructor(maxBytes: number, learning: boolean, digest: Digest, ahead = false) {
    this.#bytes = new Uint8Array(maxBytes);
    this.#view = new DataView(this.#bytes.buffer);
    this.#u8(RULES_WIRE_VERSION);
    this.#u8((learning ? FLAG_LEARNING : 0) | (ahead ? FLAG_AHEAD : 0));
    this.#u32(digest.live);
    this.#u32(digest.hi);
    this.#u32(digest.lo);
  }

  /** Room left, bytes. */
  get room(): number {
    return this.#bytes.length - this.#at;
  }

  /** Adds a change if it fits; returns whether it did. */
  change(entry: RuleEntry, size = entrySize(entry)): boolean {
    if (1 + size > this.room) return false;
    this.#u8(PART_CHANGE);
    this.#entry(entry);
    return true;
  }

  /** Adds a page request if it fits. */
  pull(from: number, ticket: Ticket = NO_TICKET): boolean {
    if (PULL_BYTES > this.room) return false;
    this.#u8(PART_PULL);
    this.#u32(from);
    this.#u32(ticket.hi);
    this.#u32(ticket.lo);
    return true;
  }

  /** Pads the section to the whole room (at least {@link PAD_BYTES} of it must be left). */
  pad(): boolean {
    const length = this.room - PAD_BYTES;
    if (length < 0) return false;
    this.#u8(PART_PAD);
    this.#u16(length);
    this.#at += length; // zeros
    return true;
  }

  /** Adds a page; its entries must fit (the caller sized them with {@link entrySize}). */
  page(page: Page): void {
    this.#u8(PART_PAGE);
    this.#u32(page.from);
    this.#u32(page.next);
    this.#u32(page.end);
    this.#u32(page.ticket.hi);
    this.#u32(page.ticket.lo);
    this.#u16(page.entries.length);
    for (const entry of page.entries) this.#entry(entry);
  }

  /** The section's bytes so far. */
  finish(): Uint8Array {
    return this.#bytes.slice(0, this.#at);
  }

  #entry(entry: RuleEntry): void {
    this.#u8(RULE_KINDS[entry.kind]);
    this.#u64(entry.version.clock);
    this.#u32(entry.version.origin.hi);
    this.#u32(entry.version.origin.lo);
    this.#text(entry.className);
    if (keyed(entry.kind)) this.#text(entry.key);
    const value = entry.value;
    if (value === undefined) this.#u8(0);
    else if (value === true) this.#u8(3);
    else if (value === false) this.#u8(4);
    else if (value instanceof KeyLimit) {
      this.#u8(2);
      this.#text(value.className);
    } else if (value instanceof BlockedUntil) {
      this.#u8(5);
      this.#u64(value.untilMs);
    } else {
      this.#u8(1);
      const code = PERIOD_CODES.get(value.periodMs()) ?? PERIOD_MS_FOLLOW;
      this.#u32(value.count());
      this.#u8(code);
      this.#u32(value.hasExplicitBurst() ? value.burstSize() : 0);
      if (code === PERIOD_MS_FOLLOW) this.#u64(value.periodMs());
    }
  }

  #text(text: string): void {
    const bytes = utf8Bytes(text);
    this.#u16(bytes.length);
    this.#bytes.set(bytes, this.#at);
    this.#at += bytes.length;
  }

  #u8(n: number): void {
    this.#bytes[this.#at++] = n;
  }

  #u16(n: number): void {
    this.#view.setUint16(this.#at, n);
    this.#at += 2;
  }

  #u32(n: number): void {
    this.#view.setUint32(this.#at, n);
    this.#at += 4;
  }

  /** A whole number below 2^53 as two u32, high first. */
  #u64(n: number): void {
    this.#u32(Math.floor(n / 2 ** 32));
    this.#u32(n % 2 ** 32);
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

/** Why an entry that could be read is not taken. */
interface Refused {
  readonly refused: string;
}

/**
 * One entry, or why it is refused when it could be read to its end (the
 * next one can be read), or undefined when it could not (cut short, or of
 * a kind or value this version cannot measure).
 */
function readEntry(r: Reader): RuleEntry | Refused | undefined {
  const kind = KIND_BY_NUMBER.get(r.u8());
  const clockHi = r.u32(), clockLo = r.u32();
  const origin = shared(`${r.u32()}:${r.u32()}`, (text) => {
    const [hi, lo] = text.split(":").map(Number);
    return { hi, lo };
  });
  if (!kind) return undefined;
  const className = readText(r);
  const key = keyed(kind) ? readText(r) : "";
  const tag = r.u8();
  let value: RuleEntry["value"];
  let refused: string | undefined;
  if (tag === 1) {
    const count = r.u32(), code = r.u8(), burst = r.u32();
    const period = code === PERIOD_MS_FOLLOW ? r.u32() * 2 ** 32 + r.u32() : code;
    value = shared(
      `${count}/${code}/${period}/${burst}`,
      () => readLimit(count, code, period, burst),
    );
    if (!value) {
      refused = `no limit is ${count} a period of code ${code} (${period}), burst ${burst}`;
    }
  } else if (tag === 2) {
    const name = readText(r);
    if (name === undefined) refused = "a class-of name that is not UTF-8";
    else value = KeyLimit.class(name);
  } else if (tag === 3 || tag === 4) value = tag === 3;
  else if (tag === 5) {
    const untilMs = r.u32() * 2 ** 32 + r.u32();
    if (untilMs > MAX_CLOCK) refused = "a block's end past the clock's range";
    else value = new BlockedUntil(untilMs);
  } else if (tag !== 0) return undefined;
  if (r.error) return undefined;
  const clock = clockHi * 2 ** 32 + clockLo;
  if (className === undefined || key === undefined) refused ??= "a class or key that is not UTF-8";
  if (clock > MAX_CLOCK) refused ??= "a version past the clock's range";
  refused ??= misfit(kind, className!, key!, value);
  if (refused !== undefined) return { refused: `${kind}: ${refused}` };
  return { kind, className: className!, key: key!, value, version: { clock, origin } };
}

/** Distinct values decoded lately, shared by every entry that says the same. */
const SHARED_MAX = 4_096;
const sharedValues = new Map<string, unknown>();

/**
 * One object for every decoded entry that says the same (limits and
 * origins are immutable, and few distinct): a table of a million entries,
 * on every member, holds a handful of them rather than a million each.
 * Forgets all past {@link SHARED_MAX}, so what it holds stays bounded.
 */
function shared<T>(key: string, make: (key: string) => T): T {
  if (sharedValues.has(key)) return sharedValues.get(key) as T;
  if (sharedValues.size >= SHARED_MAX) sharedValues.clear();
  const value = make(key);
  sharedValues.set(key, value);
  return value;
}

/**
 * The limit of a wire limit, or undefined when no `Limit` holds it; `period`
 * is the milliseconds that followed code {@link PERIOD_MS_FOLLOW}.
 */
function readLimit(count: number, code: number, period: number, burst: number): Limit | undefined {
  try {
    const limit = code === 1
      ? Limit.perSecond(count)
      : code === 2
      ? Limit.perMinute(count)
      : code === 3
      ? Limit.perHour(count)
      : code === PERIOD_MS_FOLLOW
      ? Limit.per(count, period)
      : undefined;
    return limit && burst > 0 ? limit.burst(burst) : limit;
  } catch {
    return undefined; // a count or burst out of a limit's range: malformed
  }
}

/** A string of UTF-8 after its u16 length; undefined past the end or for bytes that are not UTF-8. */
function readText(r: Reader): string | undefined {
  const bytes = r.take(r.u16());
  return r.error ? undefined : utf8Decode(bytes);
}
