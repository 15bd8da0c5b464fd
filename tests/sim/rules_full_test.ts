/**
 * A full rules table is loud, and the operator's own change is never
 * silently lost (issue 36): a forger fills every member's table with
 * peers' key limits, and a change made on member 0 still reaches every
 * member, or is refused with an error, never dropped.
 */

import { test } from "node:test";
import assert from "node:assert/strict";
import { Limit } from "../../src/core/limit.ts";
import { RateguardError } from "../../src/core/errors.ts";
import { encode } from "../../src/proto/mod.ts";
import { type RuleEntry, SectionWriter } from "../../src/core/rules_sync/mod.ts";
import { RulesFleet } from "../../src/sim/faces/rules_fleet.ts";
import { addressOf } from "../../src/sim/driver/names.ts";

const SETTLE_MS = 10_000;
const FORGER = 40;

/**
 * A forged gossip datagram in member `as`'s name (a live member's address,
 * so it is not dropped as a stranger's) carrying key limits on `keys`,
 * stamped by `origin`'s ID (by default one that is no member).
 */
function forged(fleet: RulesFleet, as: number, keys: string[], origin = FORGER): Uint8Array {
  const writer = new SectionWriter(1_300, false, { live: 0, hi: 0, lo: 0 });
  const id = addressOf(origin).id;
  for (const key of keys) {
    const entry: RuleEntry = {
      kind: "keyLimit",
      className: "",
      key,
      value: Limit.perSecond(1),
      version: { clock: fleet.nowMs * 1_024 + 5, origin: { hi: id.hi, lo: id.lo } },
    };
    assert.ok(writer.change(entry));
  }
  return encode({
    type: "gossip",
    sender: { id: addressOf(as).id, address: addressOf(as), incarnation: 0 },
    records: [],
    rules: writer.finish(),
  });
}

/** Forges key limits into every member until each table refuses one for room. */
function fillTables(fleet: RulesFleet, origin = FORGER): void {
  let next = 0;
  for (let round = 0; round < 2_000; round++) {
    const full = [0, 1, 2].every((i) => fleet.stats(i)!.rules.full > 0);
    if (full) return;
    const keys = Array.from({ length: 10 }, () => `forged:${next++}`);
    for (let i = 0; i < 3; i++) {
      const as = i === 0 ? 1 : 0;
      fleet.inject(i, addressOf(as), forged(fleet, as, keys, origin));
    }
    fleet.runUntil(fleet.nowMs + 10);
  }
  assert.fail("the tables never filled");
}

function filled(seed: number, origin = FORGER): RulesFleet {
  const fleet = new RulesFleet({ seed, size: 3, maxKeyLimits: 100 });
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined, "the fleet formed");
  fleet.runUntil(fleet.nowMs + 5_000);
  fleet.change(0, { kind: "keyLimit", className: "", key: "held", value: Limit.perSecond(9) });
  fleet.runUntil(fleet.nowMs + 2_000);
  fillTables(fleet, origin);
  return fleet;
}

test("a table a forger filled says so, and keeps what was set here apart", () => {
  const fleet = filled(36);
  for (let i = 0; i < 3; i++) {
    const s = fleet.stats(i)!;
    assert.ok(s.rules.tableFull, `member ${i} says its table is full`);
    assert.match(s.rules.tableFullReason, /full/, `member ${i} says why`);
    assert.equal(s.rules.bound, 2_378, "2 × (100 + 64 + 1,024) + 2");
    assert.equal(
      s.rules.strangerEntries,
      s.rules.bound - s.rules.reserved,
      `member ${i}: forged, up to their room`,
    );
    assert.ok(s.rules.entries < s.rules.bound, `member ${i}: the reserve is left`);
    assert.equal(s.rules.entries, s.rules.own + s.rules.peers);
  }
  assert.equal(fleet.stats(0)!.rules.own, 1, "member 0's key limit, counted apart");
  assert.equal(fleet.stats(1)!.rules.own, 0);
});

test("on a table a forger filled the operator's change still reaches every member", () => {
  const fleet = filled(40);
  fleet.change(0, { kind: "defaultLimit", className: "", key: "", value: Limit.perSecond(500) });
  // A class, not a key limit: the forged key limits filled each book's own
  // bound (maxKeyLimits) too, which refuses a new one loudly (TooManyKeyLimits).
  fleet.change(0, { kind: "class", className: "vip", key: "", value: Limit.perSecond(50) });
  fleet.runUntil(fleet.nowMs + SETTLE_MS);
  for (let i = 0; i < 3; i++) {
    assert.equal(String(fleet.book(i).defaultLimit()), "500/s", `member ${i} took the change`);
    const vip = fleet.book(i).classes().find(([c]) => c === "vip");
    assert.equal(String(vip?.[1]), "50/s", `member ${i} took the class`);
  }
});

test("a table filled in a member's name refuses the operator's change with RulesFull, made nowhere", () => {
  // Stamped with member 2's ID, forged entries are members' and may take
  // the reserve: the table fills whole, and a new rule cannot be kept.
  const fleet = filled(37, 2);
  assert.throws(
    () =>
      fleet.change(0, {
        kind: "defaultLimit",
        className: "",
        key: "",
        value: Limit.perSecond(500),
      }),
    (e: unknown) => e instanceof RateguardError && e.code === "RulesFull" && /full/.test(e.message),
  );
  fleet.runUntil(fleet.nowMs + SETTLE_MS);
  for (let i = 0; i < 3; i++) {
    assert.equal(String(fleet.book(i).defaultLimit()), "1000/s", `member ${i} made nothing`);
  }
});

test("on a full table a change to a rule held still reaches every member", () => {
  const fleet = filled(38);
  fleet.change(0, { kind: "keyLimit", className: "", key: "held", value: Limit.perSecond(3) });
  fleet.runUntil(fleet.nowMs + SETTLE_MS);
  for (let i = 0; i < 3; i++) {
    const held = fleet.book(i).keyLimits().find(([c, k]) => c === "" && k === "held");
    assert.equal(String(held?.[2]), "3/s", `member ${i} took the change`);
  }
});

test("blocks that fill the table are refused loudly, and once they end there is room again", () => {
  const fleet = new RulesFleet({ seed: 39, size: 3, maxKeyLimits: 100 });
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined, "the fleet formed");
  fleet.runUntil(fleet.nowMs + 5_000);
  // Blocks on two members, more than the peers' room of the table (the
  // enforcers hold their own 1,024 at most): the fleet's blocks, not one member's.
  let refused: unknown;
  for (let n = 0; n < 3_000 && refused === undefined; n++) {
    try {
      fleet.block(n % 2, `ip:${n}`, 60_000);
    } catch (e) {
      refused = e;
    }
    if (n % 20 === 19) fleet.runUntil(fleet.nowMs + 50);
  }
  assert.ok(refused instanceof RateguardError && refused.code === "RulesFull", "a block refused");
  const s = fleet.stats(0)!;
  assert.ok(s.rules.tableFull, "member 0 says its table is full");
  assert.match(s.rules.tableFullReason, /full/);
  assert.throws(
    () =>
      fleet.change(0, {
        kind: "defaultLimit",
        className: "",
        key: "",
        value: Limit.perSecond(500),
      }),
    (e: unknown) => e instanceof RateguardError && e.code === "RulesFull",
  );
  // The blocks end and are removals: the oldest of them make room.
  fleet.runUntil(fleet.nowMs + 61_000);
  fleet.change(0, { kind: "defaultLimit", className: "", key: "", value: Limit.perSecond(500) });
  fleet.runUntil(fleet.nowMs + SETTLE_MS);
  for (let i = 0; i < 3; i++) {
    assert.equal(String(fleet.book(i).defaultLimit()), "500/s", `member ${i} took the change`);
  }
});
