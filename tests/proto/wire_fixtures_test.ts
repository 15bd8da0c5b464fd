// Wire 0.2 is a promise (issue 33): a rolling upgrade runs a mixed fleet for
// minutes, so later code must read 0.2's datagrams as 0.2 meant them and
// write what 0.2 reads. The golden datagrams are committed under
// tests/fixtures/wire/0.2/; scripts/wire_fixtures.ts rebuilds them.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { decode, encode, MESSAGE_TYPES, RECORD_KINDS } from "../../src/proto/mod.ts";
import { checkReports, decodeReports } from "../../src/core/allocation/report.ts";
import { decodeRules } from "../../src/core/rules_sync/wire.ts";
import { RULE_KINDS } from "../../src/core/rules_sync/entry.ts";
import { Limit } from "../../src/core/limit.ts";
import {
  buildFixtures,
  checkFixtures,
  describeFixtures,
  FIXTURE_DIR,
  readFixtures,
  toHex,
} from "../../scripts/wire_fixtures.ts";

const committed = readFixtures();
const values = JSON.parse(readFileSync(`${FIXTURE_DIR}/values.json`, "utf8"));

/** The committed datagram `name`, decoded; fails the test if it does not decode. */
function decoded(name: string) {
  const result = decode(committed.get(name)!);
  assert.ok(result.ok, `${name} decodes`);
  return result.value;
}

/** `bytes` with one more section of kind `kind` at its end. */
function withSection(bytes: Uint8Array, kind: number, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length + 3 + body.length);
  out.set(bytes);
  out.set([kind, body.length >> 8, body.length & 0xff], bytes.length);
  out.set(body, bytes.length + 3);
  return out;
}

describe("wire 0.2's golden datagrams", () => {
  it("today's decoders read every committed datagram to the committed values", async () => {
    assert.ok(committed.size >= 14, `${committed.size} datagrams under ${FIXTURE_DIR}`);
    const read = await describeFixtures(
      [...committed].map(([name, bytes]) => ({ name, bytes })),
    );
    assert.deepEqual(read, values);
  });

  it("today's encoders write every one of them byte for byte", async () => {
    const built = await buildFixtures();
    assert.deepEqual(built.map((f) => f.name).sort(), [...committed.keys()].sort());
    for (const f of built) assert.equal(toHex(f.bytes), toHex(committed.get(f.name)!), f.name);
    assert.deepEqual(await checkFixtures(), []);
  });

  it("cover every message type, record state, section and rule kind", () => {
    const all = [...committed.keys()].map(decoded);
    for (const type of Object.keys(MESSAGE_TYPES)) {
      assert.ok(all.some((m) => m.type === type), `a ${type} message`);
    }
    const records = all.flatMap((m) => m.records);
    for (const state of Object.keys(RECORD_KINDS)) {
      assert.ok(records.some((r) => r.state === state), `a ${state} record`);
    }
    assert.ok(records.some((r) => r.life === undefined), "a record of no known life");
    assert.ok(all.some((m) => m.sender.life === undefined), "a sender that sends no lives");
    assert.ok(all.some((m) => "requester" in m && m.requester), "a requester section");
    // Padding is read by nobody: the join without it is 3 + 120 bytes shorter.
    assert.equal(encode(decoded("join")).length + 3 + 120, values.join.bytes, "a padding section");
    assert.ok(decoded("ping-signed") && values["ping-signed"].signature === "valid");
    const reports = all.filter((m) => m.extension).map((m) => decodeReports(m.extension!));
    assert.ok(reports.every((r) => r.ok) && reports.length >= 3);
    const sections = all.filter((m) => m.rules).map((m) => decodeRules(m.rules!)!);
    const entries = sections.flatMap((s) => [...s.changes, ...(s.page?.entries ?? [])]);
    for (const kind of Object.keys(RULE_KINDS)) {
      assert.ok(entries.some((e) => e.kind === kind), `a ${kind} entry`);
      const removable = kind !== "defaultLimit" && kind !== "dryRun";
      if (removable) assert.ok(entries.some((e) => e.kind === kind && e.value === undefined));
    }
    assert.ok(
      entries.some((e) => e.kind === "shadow" && e.className === ""),
      "the default's shadow",
    );
    assert.ok(sections.some((s) => s.pull) && sections.some((s) => s.page));
    const periods = entries.flatMap((e) => e.value instanceof Limit ? [e.value.periodMs()] : []);
    assert.ok(periods.some((ms) => ![1_000, 60_000, 3_600_000].includes(ms)), "a Limit.per period");
  });
});

describe("what a 0.2 decoder does with what a later version adds", () => {
  it("skips a section of a kind it does not know, wherever the datagram is of any type, and counts it", () => {
    for (const [name, bytes] of committed) {
      if (name === "ping-signed") continue; // a tag covers the bytes: nothing can be appended
      const known = decode(bytes);
      assert.equal(known.ok && known.skippedSections, undefined, `${name} skips nothing`);
      const grown = withSection(bytes, 200, new Uint8Array([1, 2, 3, 4, 5]));
      assert.deepEqual(decode(grown), { ...known, skippedSections: 1 }, name);
      const empty = withSection(withSection(bytes, 7, new Uint8Array(0)), 0, Uint8Array.of(9));
      assert.deepEqual(decode(empty), { ...known, skippedSections: 2 }, name);
    }
    // Before the sections it knows too: a ping's are after header 3, incarnation 4, ID 8,
    // IPv4 address 7 and seq 4.
    const ping = committed.get("ping")!;
    const fields = 3 + 4 + 8 + 7 + 4;
    const first = withSection(ping.subarray(0, fields), 250, new Uint8Array(9).fill(0xff));
    assert.deepEqual(decode(Uint8Array.of(...first, ...ping.subarray(fields))), {
      ...decode(ping),
      skippedSections: 1,
    });
    // A requester section on a type other than a ping is known, and ignored uncounted.
    const asked = committed.get("ping-requester")!;
    const requester = asked.subarray(asked.length - 3 - 8 - 7);
    assert.equal(requester[0], 6, "the requester section closes the ping");
    const ack = committed.get("ack-demand")!;
    assert.deepEqual(decode(Uint8Array.of(...ack, ...requester)), decode(ack));
  });

  it("refuses a datagram of another version byte, a reserved flag or an unknown record state", () => {
    const ping = committed.get("ping")!;
    assert.deepEqual(decode(Uint8Array.of(2, ...ping.subarray(1))), {
      ok: false,
      error: "version",
    });
    assert.deepEqual(decode(Uint8Array.of(1, 0, 8, ...ping.subarray(3))), {
      ok: false,
      error: "type",
    });
    assert.deepEqual(decode(Uint8Array.of(1, 0x02, ...ping.subarray(2))), {
      ok: false,
      error: "flags",
    });
    const gossip = Uint8Array.from(committed.get("gossip-records")!);
    // Header 3, incarnation 4, ID 8, IPv4 address 7; then the records section's kind and length.
    const firstRecord = 3 + 4 + 8 + 7 + 3;
    assert.equal(gossip[firstRecord - 3], 1, "the records section comes first");
    gossip[firstRecord] = 9;
    assert.deepEqual(decode(gossip), { ok: false, error: "state" });
  });

  it("skips a demand section of another report version, 0.1's version 1 included", () => {
    const extension = decoded("ack-demand").extension!;
    assert.equal(checkReports(extension), undefined);
    for (const version of [1, 3]) {
      const other = Uint8Array.of(version, ...extension.subarray(1));
      assert.equal(checkReports(other), `unknown report version ${version}`);
      assert.equal(decodeReports(other).ok, false);
    }
  });

  it("keeps a rules section's parts before a part type it does not know", () => {
    const rules = decoded("gossip-rules").rules!;
    const known = decodeRules(rules)!;
    const grown = decodeRules(Uint8Array.of(...rules, 99, 0, 1, 2))!;
    assert.equal(known.unknownPart, undefined);
    assert.deepEqual(grown, { ...known, unknownPart: 99 });
    assert.equal(decodeRules(Uint8Array.of(2, ...rules.subarray(1))), undefined);
  });
});
