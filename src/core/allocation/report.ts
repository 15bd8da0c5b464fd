/**
 * Demand reports on the wire: the bytes the allocator puts on probes and
 * acks through the membership extension. A section is a list of groups,
 * each one node's whole hot set at one of its rounds: absolute demands,
 * never deltas, so a lost datagram costs a period of accuracy and nothing
 * more, and a newer round simply replaces an older one.
 *
 * Layout, big-endian:
 *
 * ```
 * u8 version (2)   u8 group count
 * per group:  u32 origin id hi, u32 origin id lo, u32 origin life, u32 round,
 *             u32 age (ms), u8 flags, u8 record count
 * per record: u32 key hash hi, u32 key hash lo, f32 demand (requests a second)
 * ```
 *
 * A group names the life of its origin (the nonzero number a process draws
 * at start, which membership carries too) and its round in that life:
 * within a life, a higher round is newer; a report of another life than
 * the one membership knows is not taken at all, so a process started again
 * at the same address supersedes its earlier life whatever their rounds.
 * The age is how long ago the origin made the report, as the nodes that
 * relayed it held it: a report is believed for a bounded time (see the
 * allocator), so one forged report at the highest round cannot pin an
 * order the origin's real reports never pass.
 *
 * The version is append-only: a new layout takes a new number (1 carried
 * the origin's incarnation where 2 carries its life, and no age), and a
 * node skips a section whose version it does not know. Flag bits are
 * reserved and must be zero.
 *
 * @module
 */

import type { Hash64 } from "../hash.ts";
import { describe } from "../limit.ts";

/** The version of the demand section, its first byte. */
export const REPORT_VERSION = 2;
/** A node coordinates at most this many keys, so a group has at most this many records. */
export const MAX_RECORDS_PER_GROUP = 64;
/** Bytes of the section header. */
export const SECTION_HEADER_BYTES = 2;
/** Bytes of a group header. */
export const GROUP_HEADER_BYTES = 22;
/** Bytes of a record. */
export const RECORD_BYTES = 12;
/** The largest demand a record carries: f32 is finite up to ~3.4e38, far beyond any rate. */
const MAX_DEMAND = 1e12;

/** One key's demand at the origin. */
export interface DemandRecord {
  /** The key's 64-bit hash. */
  readonly hash: Hash64;
  /** Requests a second at the origin, smoothed. */
  readonly demand: number;
}

/** One node's hot set at one of its rounds. */
export interface DemandGroup {
  /** The reporting node's member ID. */
  readonly origin: { readonly hi: number; readonly lo: number };
  /** Which life of the origin: see `Sender.life`. */
  readonly life: number;
  /** Its round, counted from its start. */
  readonly round: number;
  /** Milliseconds since the origin made it, as the nodes that relayed it count; a u32. */
  readonly ageMs: number;
  /** Its hot keys and their demand; complete, so a key left out is no longer hot there. */
  readonly records: readonly DemandRecord[];
}

/**
 * Validates `hotKeys`, the keys a node coordinates at once: its whole hot
 * set goes in one group, so at most {@link MAX_RECORDS_PER_GROUP}.
 */
export function checkHotKeys(n: number): number {
  if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > MAX_RECORDS_PER_GROUP) {
    throw new RangeError(
      `hotKeys: expected a whole number from 1 to ${MAX_RECORDS_PER_GROUP}, got ${describe(n)}`,
    );
  }
  return n;
}

/**
 * The group cut to what fits in a section of `maxBytes` with nothing else:
 * the records of highest demand first, as those weigh most in the peers'
 * sums; `undefined` when not even an empty group fits. `cut` counts the
 * records left out. A peer takes a key left out as not hot here, so a cut
 * costs accuracy: better than no report at all, and counted so it shows.
 */
export function fitGroup(
  group: DemandGroup,
  maxBytes: number,
): { readonly group: DemandGroup | undefined; readonly cut: number } {
  const room = Math.min(
    MAX_RECORDS_PER_GROUP,
    Math.floor((maxBytes - SECTION_HEADER_BYTES - GROUP_HEADER_BYTES) / RECORD_BYTES),
  );
  const n = group.records.length;
  if (room < 0) return { group: undefined, cut: n };
  if (n <= room) return { group, cut: 0 };
  const records = [...group.records].sort((a, b) => b.demand - a.demand).slice(0, room);
  return { group: { ...group, records }, cut: n - room };
}

/** The size of a group with `records` records. */
export function groupBytes(records: number): number {
  return GROUP_HEADER_BYTES + records * RECORD_BYTES;
}

/** Encodes groups into one section; the caller keeps it within its budget with {@link groupBytes}. */
export function encodeReports(groups: readonly DemandGroup[]): Uint8Array {
  if (groups.length > 255) {
    throw new RangeError(`at most 255 groups in a section, got ${groups.length}`);
  }
  let size = SECTION_HEADER_BYTES;
  for (const g of groups) size += groupBytes(g.records.length);
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  view.setUint8(0, REPORT_VERSION);
  view.setUint8(1, groups.length);
  let at = SECTION_HEADER_BYTES;
  for (const g of groups) {
    if (g.records.length > MAX_RECORDS_PER_GROUP) {
      throw new RangeError(
        `at most ${MAX_RECORDS_PER_GROUP} records in a group, got ${g.records.length}`,
      );
    }
    view.setUint32(at, g.origin.hi);
    view.setUint32(at + 4, g.origin.lo);
    view.setUint32(at + 8, g.life >>> 0);
    view.setUint32(at + 12, g.round >>> 0);
    view.setUint32(at + 16, Math.min(Math.max(Math.ceil(g.ageMs), 0), 0xffff_ffff));
    view.setUint8(at + 20, 0);
    view.setUint8(at + 21, g.records.length);
    at += GROUP_HEADER_BYTES;
    for (const r of g.records) {
      view.setUint32(at, r.hash.hi);
      view.setUint32(at + 4, r.hash.lo);
      view.setFloat32(at + 8, Math.min(Math.max(r.demand, 0), MAX_DEMAND));
      at += RECORD_BYTES;
    }
  }
  return bytes;
}

/** The outcome of {@link decodeReports}: never an exception. */
export type ReportsResult =
  | { readonly ok: true; readonly groups: DemandGroup[] }
  | { readonly ok: false; readonly error: string };

/** Decodes a section; any malformed input is an error result, never a throw. */
export function decodeReports(bytes: Uint8Array): ReportsResult {
  if (bytes.length < SECTION_HEADER_BYTES) return { ok: false, error: "truncated section header" };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint8(0) !== REPORT_VERSION) {
    return { ok: false, error: `unknown report version ${view.getUint8(0)}` };
  }
  const count = view.getUint8(1);
  const groups: DemandGroup[] = [];
  let at = SECTION_HEADER_BYTES;
  for (let g = 0; g < count; g++) {
    if (at + GROUP_HEADER_BYTES > bytes.length) {
      return { ok: false, error: "truncated group header" };
    }
    const origin = { hi: view.getUint32(at), lo: view.getUint32(at + 4) };
    const life = view.getUint32(at + 8);
    const round = view.getUint32(at + 12);
    const ageMs = view.getUint32(at + 16);
    if (view.getUint8(at + 20) !== 0) return { ok: false, error: "reserved group flags set" };
    const n = view.getUint8(at + 21);
    if (n > MAX_RECORDS_PER_GROUP) return { ok: false, error: `${n} records in a group` };
    at += GROUP_HEADER_BYTES;
    if (at + n * RECORD_BYTES > bytes.length) return { ok: false, error: "truncated records" };
    const records: DemandRecord[] = [];
    for (let r = 0; r < n; r++, at += RECORD_BYTES) {
      const demand = view.getFloat32(at + 8);
      if (!(demand >= 0 && demand <= MAX_DEMAND)) {
        return { ok: false, error: "demand out of range" };
      }
      records.push({ hash: { hi: view.getUint32(at), lo: view.getUint32(at + 4) }, demand });
    }
    groups.push({ origin, life, round, ageMs, records });
  }
  if (at !== bytes.length) return { ok: false, error: "trailing bytes after the groups" };
  return { ok: true, groups };
}
