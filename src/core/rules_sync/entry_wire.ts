/**
 * The bytes of one rule entry, wherever a rules section carries one (a
 * change part, a page: `wire.ts`): its size, its writing and its reading,
 * with the cursors of every datagram's bytes (`proto/cursor.ts`).
 *
 * ```
 * entry  = kind u8 | clock hi u32 | clock lo u32 | origin hi u32 | origin lo u32
 *          | class length u16 | class (UTF-8) | key length u16 | key (keyLimit and block only)
 *          | value u8: 0 removed, 1 limit, 2 class-of, 3 on, 4 off, 5 blocked until
 *          | limit: count u32 | period u8 (1 s, 2 min, 3 h, 4 ms follow) | burst u32 (0: the default)
 *                   | (period 4 only) period ms hi u32 | lo u32
 *          | class-of: length u16 | name
 *          | blocked until: wall-clock ms hi u32 | lo u32
 * ```
 *
 * Numbers are big-endian; kinds and value tags are append-only. An entry
 * that reads to its end but says what its kind cannot is refused alone
 * (its neighbours can still be read); one of a kind or value tag this
 * version does not know cannot be read past.
 *
 * @module
 */

import { KeyLimit } from "../key_limit.ts";
import { Limit } from "../limit.ts";
import { utf8Bytes, utf8Decode } from "../hash.ts";
import type { Reader, Writer } from "../../proto/cursor.ts";
import {
  BlockedUntil,
  keyed,
  MAX_CLOCK,
  misfit,
  RULE_KINDS,
  type RuleEntry,
  type RuleKind,
} from "./entry.ts";

const PERIOD_CODES = new Map<number, number>([[1_000, 1], [60_000, 2], [3_600_000, 3]]);
/** The period code of any other period (`Limit.per`): its milliseconds follow the burst. */
const PERIOD_MS_FOLLOW = 4;
const KIND_BY_NUMBER = new Map<number, RuleKind>(
  Object.entries(RULE_KINDS).map(([name, n]) => [n, name as RuleKind]),
);

/** Bytes an entry takes on the wire. */
export function entrySize(entry: RuleEntry): number {
  let size = 1 + 16 + 2 + utf8Bytes(entry.className).length + 1;
  if (keyed(entry.kind)) size += 2 + utf8Bytes(entry.key).length;
  if (entry.value instanceof Limit) size += PERIOD_CODES.has(entry.value.periodMs()) ? 9 : 17;
  else if (entry.value instanceof KeyLimit) size += 2 + utf8Bytes(entry.value.className).length;
  else if (entry.value instanceof BlockedUntil) size += 8;
  return size;
}

/** A string of UTF-8 after its u16 length: the text fields of an entry. */
function writeText(w: Writer, text: string, name: string): void {
  const bytes = utf8Bytes(text);
  w.u16(bytes.length, name);
  w.bytes(bytes);
}

/** Writes `entry`; it must fit (sized with {@link entrySize}). */
export function writeEntry(w: Writer, entry: RuleEntry): void {
  w.u8(RULE_KINDS[entry.kind]);
  w.u64(entry.version.clock, "an entry's clock");
  w.u32(entry.version.origin.hi, "an entry's origin");
  w.u32(entry.version.origin.lo, "an entry's origin");
  writeText(w, entry.className, "a class name's length");
  if (keyed(entry.kind)) writeText(w, entry.key, "a key's length");
  const value = entry.value;
  if (value === undefined) w.u8(0);
  else if (value === true) w.u8(3);
  else if (value === false) w.u8(4);
  else if (value instanceof KeyLimit) {
    w.u8(2);
    writeText(w, value.className, "a class-of name's length");
  } else if (value instanceof BlockedUntil) {
    w.u8(5);
    w.u64(value.untilMs, "a block's end");
  } else {
    w.u8(1);
    const code = PERIOD_CODES.get(value.periodMs()) ?? PERIOD_MS_FOLLOW;
    w.u32(value.count(), "a limit's count");
    w.u8(code);
    w.u32(value.hasExplicitBurst() ? value.burstSize() : 0, "a limit's burst");
    if (code === PERIOD_MS_FOLLOW) w.u64(value.periodMs(), "a limit's period");
  }
}

/** Why an entry that could be read is not taken. */
export interface Refused {
  readonly refused: string;
}

/**
 * One entry, or why it is refused when it could be read to its end (the
 * next one can be read), or undefined when it could not (cut short, or of
 * a kind or value this version cannot measure).
 */
export function readEntry(r: Reader): RuleEntry | Refused | undefined {
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
