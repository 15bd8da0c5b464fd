// The rules section's wire format and the version stamps, without a network.
import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { KeyLimit } from "../../src/core/key_limit.ts";
import { Limit } from "../../src/core/limit.ts";
import { PUBLIC_HASH_KEY } from "../../src/core/hash.ts";
import {
  BlockedUntil,
  decodeRules,
  type RuleEntry,
  RulesSync,
  SectionWriter,
} from "../../src/core/rules_sync/mod.ts";

const origin = { hi: 0x0a000001, lo: 0x1e9a };

function sync(wallOffsetMs = 0): RulesSync {
  return new RulesSync({
    self: origin,
    maxEntries: 16,
    protocolPeriodMs: 200,
    wallOffsetMs,
    ticketKey: PUBLIC_HASH_KEY,
    apply: () => {},
  }, false);
}

test("entries of every kind come back from the wire as they went", () => {
  const entries: RuleEntry[] = [
    { kind: "class", className: "pro", key: "", value: Limit.perMinute(600).burst(7) },
    { kind: "keyLimit", className: "", key: "tenant:é✓😀", value: KeyLimit.class("pro") },
    { kind: "keyLimit", className: "pro", key: "k", value: undefined },
    { kind: "shadow", className: "pro", key: "", value: Limit.perHour(5) },
    { kind: "defaultLimit", className: "", key: "", value: Limit.perSecond(9) },
    { kind: "dryRun", className: "", key: "", value: true },
    { kind: "block", className: "pro", key: "ip:192.0.2.1", value: new BlockedUntil(2 ** 41 + 3) },
    { kind: "block", className: "", key: "ip:192.0.2.2", value: undefined },
  ].map((e, i) => ({ ...e, version: { clock: 2 ** 40 + i, origin } }) as RuleEntry);
  const writer = new SectionWriter(1_200, true, { live: 3, hi: 0xffffffff, lo: 1 });
  for (const e of entries) assert.ok(writer.change(e));
  const section = decodeRules(writer.finish())!;
  assert.equal(section.learning, true);
  assert.deepEqual(section.digest, { live: 3, hi: 0xffffffff, lo: 1 });
  assert.equal(section.changes.length, entries.length);
  section.changes.forEach((got, i) => {
    assert.deepEqual({ ...got, value: String(got.value) }, {
      ...entries[i],
      value: String(entries[i].value),
    });
  });
  const block = section.changes[6];
  assert.ok(block.value instanceof BlockedUntil && block.value.untilMs === 2 ** 41 + 3);
  assert.equal(section.changes[7].value, undefined);
  const [cls] = section.changes;
  assert.ok(
    cls.value instanceof Limit && cls.value.hasExplicitBurst() && cls.value.burstSize() === 7,
  );
});

test("decoding any bytes never throws", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
      decodeRules(bytes);
      const framed = new Uint8Array([1, 0, ...new Uint8Array(12), ...bytes]);
      decodeRules(framed);
    }),
    { numRuns: 2_000 },
  );
});

test("a change made at a fractional millisecond gets a whole-number version the wire carries", () => {
  const s = sync(1_700_000_000_000.25);
  const entry = s.local(12.7, {
    kind: "keyLimit",
    className: "",
    key: "k",
    value: Limit.perSecond(1),
  })!;
  assert.ok(Number.isInteger(entry.version.clock), `clock ${entry.version.clock}`);
  const writer = new SectionWriter(200, false, { live: 0, hi: 0, lo: 0 });
  writer.change(entry);
  assert.equal(decodeRules(writer.finish())!.changes[0].version.clock, entry.version.clock);
});

test("versions made here only go up, whatever the clock does", () => {
  const s = sync();
  let last = 0;
  for (const nowMs of [100, 100, 99, 50, 101, 101.5]) {
    const e = s.local(nowMs, { kind: "dryRun", className: "", key: "", value: true })!;
    assert.ok(e.version.clock > last, `${e.version.clock} after ${last}`);
    last = e.version.clock;
  }
});
