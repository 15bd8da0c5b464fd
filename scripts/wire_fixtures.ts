/**
 * The golden datagrams of wire 0.2 (issue 33): every message type, record
 * state and section kind, demand reports and fleet rules of every entry
 * kind, built from fixed values (fixed addresses, lives, seeds, clocks and
 * secret: nothing here reads a clock or draws a number), so that a run
 * today writes the same bytes as the run that committed them.
 *
 * ```
 * node_modules/.bin/deno run -A scripts/wire_fixtures.ts --write   # (re)write tests/fixtures/wire/0.2/
 * node_modules/.bin/deno run -A scripts/wire_fixtures.ts --check   # exit 1 if today's code differs
 * ```
 *
 * Each datagram is `<name>.hex` (its bytes in hexadecimal, one line) and
 * `values.json` holds what today's decoders read from each, nested sections
 * decoded too. `tests/proto/wire_fixtures_test.ts` reads the files with
 * today's decoders and encodes the values below again, byte for byte.
 * Regenerate only for a change that is an append (a new section kind, part
 * type, version or fixture); a fixture whose bytes change is a broken promise.
 *
 * @module
 */

import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
import {
  Address,
  decode,
  encode,
  MemberId,
  type MemberRecord,
  type Message,
  type Peer,
} from "../src/proto/mod.ts";
import { decodeReports, type DemandGroup, encodeReports } from "../src/core/allocation/report.ts";
import { decodeRules, type Page, SectionWriter } from "../src/core/rules_sync/wire.ts";
import { BlockedUntil, type RuleEntry, type RuleValue } from "../src/core/rules_sync/entry.ts";
import { KeyLimit } from "../src/core/key_limit.ts";
import { Limit } from "../src/core/limit.ts";
import { authConfig, judge, seal, Secret } from "../src/core/auth.ts";
import { webCryptoMac } from "../src/runtime/hmac.ts";

/** Where the fixtures of wire 0.2 live, from the repository's root. */
export const FIXTURE_DIR = "tests/fixtures/wire/0.2";

/** One golden datagram: its file's name (without `.hex`) and its bytes. */
export interface Fixture {
  /** The file's name, without `.hex`. */
  readonly name: string;
  /** The datagram. */
  readonly bytes: Uint8Array;
}

/** The secret of the signed fixture: 32 fixed bytes, for these files only. */
export const FIXTURE_SECRET: Secret = new Secret(new Uint8Array(32).fill(0x5a));

const A = Address.parse("10.0.0.1:7946");
const B = Address.parse("10.0.0.2:7946");
const C = Address.parse("10.0.0.3:7946");
const D = Address.parse("[2001:db8::4]:7946");
const peer = (address: Address): Peer => ({ id: address.id, address });
const LIFE_A = 0x1111_1111, LIFE_B = 0x2222_2222, LIFE_C = 0x3333_3333;
const senderA = { ...peer(A), incarnation: 3, life: LIFE_A };
const senderB = { ...peer(B), incarnation: 1, life: LIFE_B };
const senderC = { ...peer(C), incarnation: 0, life: LIFE_C };

/** Hot sets whose demands f32 holds exactly, so the JSON says what the bytes say. */
const GROUP_B: DemandGroup = {
  origin: B.id,
  life: LIFE_B,
  round: 17,
  ageMs: 0,
  records: [{ hash: { hi: 0x0123_4567, lo: 0x89ab_cdef }, demand: 12.5 }, {
    hash: { hi: 0xfedc_ba98, lo: 0x7654_3210 },
    demand: 0.25,
  }],
};
const GROUP_C: DemandGroup = {
  origin: C.id,
  life: LIFE_C,
  round: 4,
  ageMs: 250,
  records: [{ hash: { hi: 0x0123_4567, lo: 0x89ab_cdef }, demand: 300 }],
};

/** A change of fixed version: clock `tick` ticks after a fixed instant, made by A. */
function entry(
  kind: RuleEntry["kind"],
  className: string,
  key: string,
  value: RuleValue | undefined,
  tick: number,
): RuleEntry {
  const clock = 1_780_000_000_000 * 1_024 + tick;
  return { kind, className, key, value, version: { clock, origin: A.id } };
}

/** Rules of every kind and value tag: limits, class-of, flags, a block, removals. */
const CHANGES: readonly RuleEntry[] = [
  entry("class", "pro", "", Limit.perSecond(1_000).burst(50), 1),
  entry("shadow", "pro", "", Limit.perMinute(600), 2),
  entry("shadow", "", "", Limit.perHour(3_600), 3),
  entry("keyLimit", "pro", "tenant:42", Limit.perSecond(5), 4),
  entry("keyLimit", "", "user:7", KeyLimit.class("pro"), 5),
  entry("block", "", "ip:192.0.2.9", new BlockedUntil(1_780_000_060_000), 6),
  entry("defaultLimit", "", "", Limit.perSecond(100), 7),
  entry("dryRun", "", "", true, 8),
  entry("class", "old", "", undefined, 9),
  entry("shadow", "", "", undefined, 10),
  entry("keyLimit", "pro", "tenant:7", undefined, 11),
  entry("block", "", "ip:192.0.2.10", undefined, 12),
];
const DIGEST = { live: 8, hi: 0x0bad_cafe, lo: 0x1234_5678 };
const TICKET = { hi: 0xdead_beef, lo: 0x0000_0007 };

function rulesChanges(): Uint8Array {
  const w = new SectionWriter(1_000, false, DIGEST, true);
  for (const change of CHANGES) w.change(change);
  w.pull(0, TICKET);
  return w.finish();
}

/**
 * Limits of periods the three named ones are not (`Limit.per`): their
 * period code says the milliseconds follow.
 */
const PERIOD_CHANGES: readonly RuleEntry[] = [
  entry("keyLimit", "pro", "tenant:9", Limit.per(100, 15 * 60_000), 14),
  entry("class", "daily", "", Limit.per(10_000, 86_400_000).burst(10_000), 15),
  entry("shadow", "daily", "", Limit.per(10, 500), 16),
];

function rulesPeriods(): Uint8Array {
  const w = new SectionWriter(1_000, false, DIGEST);
  for (const change of PERIOD_CHANGES) w.change(change);
  return w.finish();
}

function rulesPage(): Uint8Array {
  const page: Page = {
    from: 0,
    next: 5,
    end: 9,
    ticket: TICKET,
    entries: [...CHANGES.slice(6, 8), entry("dryRun", "", "", false, 13), ...CHANGES.slice(0, 2)],
  };
  const w = new SectionWriter(1_000, true, DIGEST);
  w.page(page);
  return w.finish();
}

function rulesPull(): Uint8Array {
  const w = new SectionWriter(200, true, { live: 0, hi: 0, lo: 0 });
  w.pull(0);
  w.pad(); // pays for the page it asks for
  return w.finish();
}

/** Records of every state, with a life unknown (0) among them. */
const RECORDS: readonly MemberRecord[] = [
  { state: "alive", ...senderB },
  { state: "suspect", ...senderC, incarnation: 2, from: A.id },
  { state: "dead", ...peer(D), incarnation: 5 },
  { state: "left", ...peer(Address.parse("10.0.0.5:7946")), incarnation: 1, life: 0x5555_5555 },
];

/** The messages, by fixture name; the signed one is sealed in {@link buildFixtures}. */
function messages(): [string, Message][] {
  return [
    ["ping", { type: "ping", seq: 42, sender: senderA, records: [RECORDS[0]] }],
    ["ping-v6-no-lives", {
      type: "ping",
      seq: 1,
      sender: { ...peer(D), incarnation: 0 },
      records: [],
    }],
    ["ack-demand", {
      type: "ack",
      seq: 42,
      sender: senderB,
      records: [],
      extension: encodeReports([GROUP_B, GROUP_C]),
    }],
    ["nack", { type: "nack", seq: 43, sender: senderC, records: [], extension: encodeReports([]) }],
    ["ping-req", {
      type: "pingReq",
      seq: 44,
      target: peer(D),
      sender: senderA,
      records: [],
      extension: encodeReports([{ ...GROUP_B, records: [] }]),
    }],
    ["ping-requester", { type: "ping", seq: 45, sender: senderC, records: [], requester: peer(A) }],
    ["join", { type: "join", page: 0, sender: senderC, records: [], padding: 120 }],
    ["join-rules", { type: "join", page: 1, sender: senderC, records: [], rules: rulesPull() }],
    ["state", {
      type: "state",
      page: 0,
      pages: 2,
      sender: senderA,
      records: [RECORDS[0], { state: "alive", ...senderC }],
    }],
    ["state-rules-page", {
      type: "state",
      page: 1,
      pages: 2,
      sender: senderA,
      records: [],
      rules: rulesPage(),
    }],
    ["leave", { type: "gossip", sender: senderB, records: [{ state: "left", ...senderB }] }],
    ["gossip-records", { type: "gossip", sender: senderA, records: RECORDS }],
    ["gossip-rules", { type: "gossip", sender: senderA, records: [], rules: rulesChanges() }],
    ["gossip-rules-periods", {
      type: "gossip",
      sender: senderA,
      records: [],
      rules: rulesPeriods(),
    }],
  ];
}

/**
 * Every fixture, built with today's encoders from the fixed values above.
 *
 * @returns The fixtures, in a fixed order.
 */
export async function buildFixtures(): Promise<Fixture[]> {
  const fixtures = messages().map(([name, m]) => ({ name, bytes: encode(m) }));
  const ping = fixtures.find((f) => f.name === "ping")!;
  const sealed = await seal(authConfig("required", [FIXTURE_SECRET]), ping.bytes, webCryptoMac);
  fixtures.push({ name: "ping-signed", bytes: sealed });
  return fixtures;
}

/**
 * What today's decoders read from a datagram, as plain JSON: the message,
 * its demand reports and its rules section decoded too, a signed one's tag
 * checked with {@link FIXTURE_SECRET}.
 *
 * @param bytes A datagram.
 * @returns A JSON value.
 */
export async function describeDatagram(bytes: Uint8Array): Promise<unknown> {
  const result = decode(bytes);
  if (!result.ok) return { error: result.error };
  // The length too: padding, which no decoder reads, is only that.
  const out: Record<string, unknown> = {
    bytes: bytes.length,
    ...plain(result.value) as Record<string, unknown>,
  };
  if (bytes[1] & 1) {
    const verdict = await judge(authConfig("required", [FIXTURE_SECRET]), bytes, webCryptoMac);
    out.signature = verdict.accept ? "valid" : verdict.reason;
  }
  const { extension, rules } = result.value;
  if (extension) {
    const reports = decodeReports(extension);
    out.extension = reports.ok ? { reports: plain(reports.groups) } : { error: reports.error };
  }
  if (rules) out.rules = plain(decodeRules(rules) ?? { error: "header" });
  return out;
}

/** A decoded value as JSON: addresses and IDs as their text, limits as their parts. */
function plain(value: unknown): unknown {
  if (value instanceof Address || value instanceof MemberId) return value.toString();
  if (value instanceof Limit) {
    return {
      limit: value.toString(),
      burst: value.hasExplicitBurst() ? value.burstSize() : null,
    };
  }
  if (value instanceof KeyLimit) return { classOf: value.className };
  if (value instanceof BlockedUntil) return { blockedUntilMs: value.untilMs };
  if (value instanceof Uint8Array) return { bytes: value.length };
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === "object") {
    if ("hi" in value && "lo" in value && Object.keys(value).length === 2) {
      const { hi, lo } = value as { hi: number; lo: number };
      return hex32(hi) + hex32(lo);
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = plain(v);
    if ("kind" in value && "version" in value && !("value" in out && out.value !== undefined)) {
      out.value = "removed";
    }
    return out;
  }
  return value;
}

const hex32 = (n: number) => (n >>> 0).toString(16).padStart(8, "0");

/** Bytes as one line of lowercase hexadecimal. */
export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Bytes from {@link toHex}'s text (whitespace ignored). */
export function fromHex(text: string): Uint8Array {
  const clean = text.replace(/\s+/g, "");
  return Uint8Array.from(clean.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

/** The committed datagrams, by name. */
export function readFixtures(dir: string = FIXTURE_DIR): Map<string, Uint8Array> {
  const files = readdirSync(dir).filter((f) => f.endsWith(".hex")).sort();
  return new Map(files.map((f) => [f.slice(0, -4), fromHex(readFileSync(`${dir}/${f}`, "utf8"))]));
}

/** What today's decoders read from each fixture, by name in alphabetical order. */
export async function describeFixtures(
  fixtures: readonly Fixture[],
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const sorted = [...fixtures].sort((a, b) => a.name < b.name ? -1 : 1);
  for (const f of sorted) out[f.name] = await describeDatagram(f.bytes);
  return out;
}

/**
 * What differs between today's code and the committed fixtures; empty when none.
 *
 * @param dir The fixtures' folder.
 * @returns One line per difference.
 */
export async function checkFixtures(dir: string = FIXTURE_DIR): Promise<string[]> {
  const built = await buildFixtures();
  const committed = existsSync(dir) ? readFixtures(dir) : new Map<string, Uint8Array>();
  const problems: string[] = [];
  for (const f of built) {
    const file = committed.get(f.name);
    if (!file) problems.push(`${f.name}.hex: missing`);
    else if (toHex(file) !== toHex(f.bytes)) {
      problems.push(`${f.name}.hex: today's encoder differs`);
    }
  }
  for (const name of committed.keys()) {
    if (!built.some((f) => f.name === name)) problems.push(`${name}.hex: built by nothing`);
  }
  const json = existsSync(`${dir}/values.json`) ? readFileSync(`${dir}/values.json`, "utf8") : "";
  const read = await describeFixtures([...committed].map(([name, bytes]) => ({ name, bytes })));
  if (json !== stringify(read)) problems.push("values.json: today's decoders read otherwise");
  return problems;
}

function stringify(value: unknown): string {
  return JSON.stringify(value, null, 2) + "\n";
}

async function write(dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const built = await buildFixtures();
  for (const f of built) writeFileSync(`${dir}/${f.name}.hex`, toHex(f.bytes) + "\n");
  writeFileSync(`${dir}/values.json`, stringify(await describeFixtures(built)));
  console.log(`wrote ${built.length} datagrams and values.json to ${dir}`);
}

if ((import.meta as { main?: boolean }).main) {
  const mode = process.argv.slice(2)[0];
  if (mode === "--write") await write(FIXTURE_DIR);
  else if (mode === "--check") {
    const problems = await checkFixtures();
    for (const p of problems) console.error(p);
    if (problems.length > 0) {
      console.error("wire 0.2's fixtures differ: a change of encoding must be an append");
      process.exit(1);
    }
    console.log("wire 0.2's fixtures: unchanged");
  } else {
    console.error("usage: deno run -A scripts/wire_fixtures.ts --write | --check");
    process.exit(2);
  }
}
