/**
 * The byte layout of a datagram, and `encode`/`decode`.
 *
 * ```
 * version u8 | flags u8 | type u8 | sender | type's fields | sections… | tag?
 * sender    = incarnation u32 | id u64 | address
 * address   = family u8 (4|6) | ip (4|16 bytes) | port u16
 * fields    = ping, ack, nack: seq u32 · pingReq: seq u32 | id u64 | address
 *             join: page u16 · state: page u16 | pages u16 · gossip: none
 * section   = kind u8 | length u16 | body (length bytes)
 * record    = state u8 | incarnation u32 | id u64 | address | from u64 (suspect only)
 * lives     = sender life u32 | one life u32 per record, in the records' order
 * ```
 *
 * Sections: records 1, extension 2, padding 3 (zeros, skipped), lives 4,
 * rules 5 (the fleet's rule changes, opaque here: see `core/rules_sync`),
 * requester 6 (a helper's ping: `id u64 | address` of whom it probes for;
 * skipped on other types).
 * A life of 0 is no life: a sender that does not send lives (a node of an
 * earlier release) leaves the section out, and a decoder leaves `life` out
 * of what it says.
 *
 * Integers are big-endian. A set `signed` flag means the last `TAG_BYTES`
 * bytes are a tag the runtime checks; this layer neither makes nor verifies it.
 *
 * From 0.2.0 this layout is a promise, because a rolling upgrade runs a
 * mixed fleet: golden datagrams of 0.2 are committed under
 * `tests/fixtures/wire/0.2/` (built by `scripts/wire_fixtures.ts --write`,
 * checked by `--check` and `tests/proto/wire_fixtures_test.ts`), and later
 * code must read them as 0.2 did and write them byte for byte. What grows,
 * grows by appending:
 * - a section of a kind this decoder does not know is skipped, whatever its
 *   length and wherever it stands, and counted (`skippedSections` of the
 *   result, `stats().skippedSections` of a guard): new content is a new section
 *   kind, never a new meaning for the bytes of a known one;
 * - the version byte, the flag bits, a type's fields and the layout of the
 *   records, lives and requester sections never change: an unknown version,
 *   flag, message type or record state refuses the whole datagram, as does a
 *   second section of a known kind or a lives section of the wrong length;
 * - the extension (demand reports, `core/allocation/report.ts`) and rules
 *   (`core/rules_sync/wire.ts`) sections carry versions of their own, and say
 *   how they grow; a new demand layout travels in a new section kind beside
 *   the previous minor version's, which keeps its place in section 2.
 * See docs/membership.md, "What 0.2 promises".
 *
 * Why this file is over 400 lines: it is one wire format, the layout drawn
 * above, and the code that must agree on it byte for byte: `encodedSize`
 * counts what `encode` writes, `decode` reads it back section by section,
 * and the signed framing marks and splits the same header; a section kind
 * added is added to each of them here. The cursors that read and write the
 * fields (integers, IDs, addresses) are in `cursor.ts`.
 *
 * @module
 */

import { getU32 } from "./bytes.ts";
import { ID_BYTES, Reader, Writer } from "./cursor.ts";
import {
  MAX_DATAGRAM_BYTES,
  MAX_MESSAGE_BYTES,
  type MemberRecord,
  type MemberState,
  type Message,
  MESSAGE_TYPES,
  type MessageType,
  type Peer,
  RECORD_KINDS,
  type Sender,
  TAG_BYTES,
  WIRE_VERSION,
} from "./message.ts";

/** Flag bit: the datagram ends with a `TAG_BYTES` tag. Other bits are reserved and must be 0. */
export const FLAG_SIGNED = 0x01;

/** Section kinds. Append-only; decoders skip kinds they do not know. */
const SECTION_RECORDS = 1;
const SECTION_EXTENSION = 2;
/** Zeros that only lengthen a datagram, to pay for its answer; read by nobody. */
const SECTION_PADDING = 3;
const SECTION_LIVES = 4;
/** Rule changes and their transfer, on any message type; opaque bytes to this layer. */
const SECTION_RULES = 5;
/** On a helper's ping, the member it probes for. */
const SECTION_REQUESTER = 6;
/** Bytes of one life in the lives section. */
const LIFE_BYTES = 4;

const HEADER_BYTES = 3;
/** Bytes before a section's payload (kind, length); the composer budgets with it. */
export const MESSAGE_SECTION_HEADER_BYTES = 3;

/** Why `decode` refused a datagram. */
export type DecodeError =
  | "too-short"
  | "too-long"
  | "version"
  | "flags"
  | "type"
  | "truncated"
  | "address"
  | "state"
  | "section";

/** The outcome of `decode`: never an exception. */
export type DecodeResult =
  | {
    readonly ok: true;
    readonly value: Message;
    /** Sections of kinds this decoder does not know (a later version's), skipped; absent when none. */
    readonly skippedSections?: number;
  }
  | { readonly ok: false; readonly error: DecodeError };

// Each byte's meaning by its value, undefined where it has none: an array
// rather than a `Map`, as a datagram reads one for each of its records.
const TYPE_BY_NUMBER = byNumber<MessageType>(MESSAGE_TYPES);
const STATE_BY_NUMBER = byNumber<MemberState>(RECORD_KINDS);

function byNumber<T extends string>(
  numbers: Readonly<Record<T, number>>,
): readonly (T | undefined)[] {
  const names: (T | undefined)[] = new Array(256).fill(undefined);
  for (const [name, n] of Object.entries(numbers) as [T, number][]) names[n] = name;
  return names;
}

/**
 * Bytes one record takes on the wire, its life in the lives section included.
 *
 * @param record A member record.
 * @returns Its encoded length, bytes.
 */
export function recordSize(record: MemberRecord): number {
  const bytes = 1 + 4 + ID_BYTES + record.address.byteLength + LIFE_BYTES;
  return bytes + (record.state === "suspect" ? ID_BYTES : 0);
}

/** Whether `message` carries the lives section: whenever a life is known. */
function hasLives(message: Message): boolean {
  return message.sender.life !== undefined || message.records.some((r) => r.life !== undefined);
}

/**
 * Bytes `message` takes on the wire, before any tag.
 *
 * @param message A message.
 * @returns Its encoded length, bytes, unsigned.
 */
export function encodedSize(message: Message): number {
  let size = HEADER_BYTES + 4 + ID_BYTES + message.sender.address.byteLength;
  if (message.type === "pingReq") size += 4 + ID_BYTES + message.target.address.byteLength;
  else if (message.type === "state") size += 4;
  else if (message.type === "join") size += 2;
  else if ("seq" in message) size += 4;
  if (message.records.length > 0) {
    size += MESSAGE_SECTION_HEADER_BYTES;
    for (const record of message.records) size += recordSize(record) - LIFE_BYTES;
  }
  if (message.extension) size += MESSAGE_SECTION_HEADER_BYTES + message.extension.length;
  if (message.rules) size += MESSAGE_SECTION_HEADER_BYTES + message.rules.length;
  if (hasLives(message)) {
    size += MESSAGE_SECTION_HEADER_BYTES + LIFE_BYTES * (1 + message.records.length);
  }
  if (message.padding) size += MESSAGE_SECTION_HEADER_BYTES + message.padding;
  const requester = requesterOf(message);
  if (requester) size += MESSAGE_SECTION_HEADER_BYTES + ID_BYTES + requester.address.byteLength;
  return size;
}

/**
 * Encodes `message`, unsigned.
 *
 * @throws {RangeError} if it would take more than `MAX_MESSAGE_BYTES` (so
 *   that a signed copy stays within `MAX_DATAGRAM_BYTES`), or a number is
 *   not a u32.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Address } from "./address.ts";
 * import { decode, encode } from "./codec.ts";
 * const address = Address.parse("10.0.0.1:7946");
 * const sender = { id: address.id, address, incarnation: 0 };
 * const bytes = encode({ type: "ping", seq: 7, sender, records: [] });
 * const result = decode(bytes);
 * assert(result.ok && result.value.type === "ping" && result.value.seq === 7);
 * ```
 *
 * @param message The message.
 * @returns The datagram's bytes.
 */
export function encode(message: Message): Uint8Array {
  const padding = message.padding ?? 0;
  if (!Number.isInteger(padding) || padding < 0) {
    throw new RangeError(`padding must be a whole number of bytes, got ${padding}`);
  }
  const size = encodedSize(message);
  if (size > MAX_MESSAGE_BYTES) {
    throw new RangeError(
      `message of ${size} bytes exceeds MAX_MESSAGE_BYTES (${MAX_MESSAGE_BYTES})`,
    );
  }
  const w = new Writer(size);
  w.u8(WIRE_VERSION);
  w.u8(0);
  w.u8(MESSAGE_TYPES[message.type]);
  w.u32(message.sender.incarnation, "sender.incarnation");
  w.peer(message.sender);
  if (message.type === "pingReq") {
    w.u32(message.seq, "seq");
    w.peer(message.target);
  } else if (message.type === "join") {
    w.u16(message.page, "page");
  } else if (message.type === "state") {
    w.u16(message.page, "page");
    w.u16(message.pages, "pages");
  } else if ("seq" in message) {
    w.u32(message.seq, "seq");
  }
  if (message.records.length > 0) {
    const start = w.section(SECTION_RECORDS);
    for (const record of message.records) {
      w.u8(RECORD_KINDS[record.state]);
      w.u32(record.incarnation, "record.incarnation");
      w.peer(record);
      if (record.state === "suspect") w.id(record.from);
    }
    w.endSection(start);
  }
  if (message.extension) {
    const start = w.section(SECTION_EXTENSION);
    w.bytes(message.extension);
    w.endSection(start);
  }
  if (message.rules) {
    const start = w.section(SECTION_RULES);
    w.bytes(message.rules);
    w.endSection(start);
  }
  if (hasLives(message)) {
    const start = w.section(SECTION_LIVES);
    w.u32(message.sender.life ?? 0, "sender.life");
    for (const record of message.records) w.u32(record.life ?? 0, "record.life");
    w.endSection(start);
  }
  const requester = requesterOf(message);
  if (requester) {
    const start = w.section(SECTION_REQUESTER);
    w.peer(requester);
    w.endSection(start);
  }
  if (message.padding) {
    // The buffer starts zeroed: the padding is only its length.
    const start = w.section(SECTION_PADDING);
    w.skip(message.padding);
    w.endSection(start);
  }
  return w.buffer;
}

/**
 * Decodes a datagram. Never throws: anything that is not a well-formed
 * message of this version is an error. For a signed datagram the tag is
 * skipped, not checked.
 *
 * @param datagram The bytes received, any bytes.
 * @returns The message, or the reason it is none.
 */
export function decode(datagram: Uint8Array): DecodeResult {
  if (datagram.length < HEADER_BYTES) return fail("too-short");
  if (datagram.length > MAX_DATAGRAM_BYTES) return fail("too-long");
  if (datagram[0] !== WIRE_VERSION) return fail("version");
  const flags = datagram[1];
  if ((flags & ~FLAG_SIGNED) !== 0) return fail("flags");
  const type = TYPE_BY_NUMBER[datagram[2]];
  if (!type) return fail("type");
  const end = flags & FLAG_SIGNED ? datagram.length - TAG_BYTES : datagram.length;
  if (end < HEADER_BYTES) return fail("truncated");
  // Unsigned, the datagram is read as it is, with no view of it made.
  const r = new Reader(
    end === datagram.length ? datagram : datagram.subarray(0, end),
    HEADER_BYTES,
  );
  const incarnation = r.u32();
  const { id, address } = r.peer();
  const sender: Sender = { id, address, incarnation };
  let message: Message;
  if (type === "pingReq") {
    const seq = r.u32();
    message = { type, seq, target: r.peer(), sender, records: [] };
  } else if (type === "join") {
    message = { type, page: r.u16(), sender, records: [] };
  } else if (type === "state") {
    const page = r.u16();
    message = { type, page, pages: r.u16(), sender, records: [] };
  } else if (type === "gossip") {
    message = { type, sender, records: [] };
  } else {
    message = { type, seq: r.u32(), sender, records: [] };
  }
  return r.error ? fail(r.error) : readSections(r, message);
}

function readSections(r: Reader, message: Message): DecodeResult {
  let records: MemberRecord[] | undefined;
  let extension: Uint8Array | undefined;
  let lives: Uint8Array | undefined;
  let rules: Uint8Array | undefined;
  let requester: Peer | undefined;
  let skipped = 0;
  while (!r.error && r.remaining > 0) {
    const kind = r.u8();
    const length = r.u16();
    const body = r.take(length);
    if (r.error) break;
    if (kind === SECTION_RECORDS) {
      if (records) return fail("section");
      const parsed = readRecords(new Reader(body, 0));
      if (typeof parsed === "string") return fail(parsed);
      records = parsed;
    } else if (kind === SECTION_EXTENSION) {
      if (extension) return fail("section");
      extension = body.slice();
    } else if (kind === SECTION_LIVES) {
      if (lives) return fail("section");
      lives = body;
    } else if (kind === SECTION_RULES) {
      if (rules) return fail("section");
      rules = body.slice();
    } else if (kind === SECTION_REQUESTER && message.type === "ping") {
      if (requester) return fail("section");
      const inner = new Reader(body, 0);
      requester = inner.peer();
      if (inner.error) return fail(inner.error);
      if (inner.remaining > 0) return fail("section");
    } else if (kind !== SECTION_PADDING && kind !== SECTION_REQUESTER) skipped++; // a later kind
  }
  if (r.error) return fail(r.error);
  const all = records ?? [];
  if (lives && !setLives(message.sender, all, lives)) return fail("section");
  // The message is fresh from `decode`: filled in place rather than copied.
  const value = message as { -readonly [K in keyof Message]: Message[K] } & {
    extension?: Uint8Array;
    rules?: Uint8Array;
    requester?: Peer;
  };
  value.records = all;
  if (requester) value.requester = requester;
  if (extension) value.extension = extension;
  if (rules) value.rules = rules;
  return skipped === 0
    ? { ok: true, value: value as Message }
    : { ok: true, value: value as Message, skippedSections: skipped };
}

/** The member a helper's ping probes for, if `message` is one. */
function requesterOf(message: Message): Peer | undefined {
  return message.type === "ping" ? message.requester : undefined;
}

/**
 * Gives the sender and each record its life from the lives section, one for
 * the sender, then one per record; in place, as all are fresh from the
 * bytes (a copy of each was a large share of decoding a datagram).
 *
 * @returns False if the section's length does not match.
 */
function setLives(sender: Sender, records: readonly MemberRecord[], lives: Uint8Array): boolean {
  if (lives.length !== LIFE_BYTES * (1 + records.length)) return false;
  const set = (to: { life?: number }, i: number) => {
    const value = getU32(lives, i * LIFE_BYTES);
    if (value !== 0) to.life = value;
  };
  set(sender as { life?: number }, 0);
  for (let i = 0; i < records.length; i++) set(records[i] as { life?: number }, i + 1);
  return true;
}

function readRecords(r: Reader): MemberRecord[] | DecodeError {
  const records: MemberRecord[] = [];
  while (!r.error && r.remaining > 0) {
    const state = STATE_BY_NUMBER[r.u8()];
    if (!state) return r.error ?? "state";
    const incarnation = r.u32();
    const { id, address } = r.peer();
    if (state === "suspect") records.push({ state, incarnation, id, address, from: r.id() });
    else records.push({ state, incarnation, id, address });
  }
  return r.error ?? records;
}

function fail(error: DecodeError): DecodeResult {
  return { ok: false, error };
}

/**
 * Returns a copy of an encoded message marked signed, with `TAG_BYTES` zero
 * bytes at its end for the runtime to fill with the tag of everything before.
 *
 * @param message An encoded message, unsigned.
 * @returns A new buffer, flagged signed, with room for the tag.
 */
export function prepareSigned(message: Uint8Array): Uint8Array {
  const out = new Uint8Array(message.length + TAG_BYTES);
  out.set(message);
  out[1] |= FLAG_SIGNED;
  return out;
}

/**
 * For a signed datagram, the bytes its tag covers and the tag; otherwise undefined.
 *
 * @param datagram The bytes received.
 * @returns The covered bytes and the tag, or `undefined` for an unsigned datagram.
 */
export function splitSigned(
  datagram: Uint8Array,
): { readonly covered: Uint8Array; readonly tag: Uint8Array } | undefined {
  if (datagram.length < HEADER_BYTES + TAG_BYTES || !(datagram[1] & FLAG_SIGNED)) return undefined;
  const cut = datagram.length - TAG_BYTES;
  return { covered: datagram.subarray(0, cut), tag: datagram.subarray(cut) };
}
