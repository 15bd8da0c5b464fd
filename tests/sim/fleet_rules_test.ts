/**
 * Fleet rules on virtual time: changes made on one node reach all,
 * concurrent changes converge by the version order, removals against sets,
 * reordered, replayed and forged changes, a newcomer that learns the table
 * before it leaves its hold, and the traffic of a quiet fleet.
 */

import { test } from "node:test";
import assert from "node:assert/strict";
import { authConfig, Secret } from "../../src/core/auth.ts";
import { Limit } from "../../src/core/limit.ts";
import { encode } from "../../src/proto/mod.ts";
import { type RuleEntry, SectionWriter, TOMBSTONE_MS } from "../../src/core/rules_sync/mod.ts";
import { RulesFleet } from "../../src/sim/faces/rules_fleet.ts";
import { addressOf } from "../../src/sim/driver/names.ts";

const SETTLE_MS = 10_000;

function keyLimitOf(fleet: RulesFleet, index: number, key: string): string | undefined {
  const found = fleet.book(index).keyLimits().find(([c, k]) => c === "" && k === key);
  return found ? String(found[2]) : undefined;
}

function everyNode(fleet: RulesFleet, key: string): (string | undefined)[] {
  return Array.from({ length: fleet.size }, (_, i) => keyLimitOf(fleet, i, key));
}

/** A gossip datagram from member `index`'s address carrying `entries` as changes. */
function changeDatagram(index: number, entries: RuleEntry[], idOf = index, cut = 0): Uint8Array {
  const writer = new SectionWriter(1_000, false, { live: 0, hi: 0, lo: 0 });
  for (const entry of entries) assert.ok(writer.change(entry));
  const rules = writer.finish();
  const address = addressOf(index);
  return encode({
    type: "gossip",
    sender: { id: addressOf(idOf).id, address, incarnation: 0 },
    records: [],
    rules: rules.subarray(0, rules.length - cut),
  });
}

/** A key limit of 1/s on `key`, as node `index` would stamp it `aheadMs` from now. */
function entryBy(fleet: RulesFleet, index: number, key: string, aheadMs = 0): RuleEntry {
  const id = addressOf(index).id;
  return {
    kind: "keyLimit",
    className: "",
    key,
    value: Limit.perSecond(1),
    version: {
      clock: (fleet.nowMs + aheadMs) * 1_024 + 5,
      origin: { hi: id.hi, lo: id.lo },
    },
  };
}

function started(seed: number, size: number, extra = {}): RulesFleet {
  const fleet = new RulesFleet({ seed, size, ...extra });
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined, "the fleet formed");
  fleet.runUntil(fleet.nowMs + 5_000); // every member knows every other
  return fleet;
}

test("a key limit set on one node reaches every node within a few periods", () => {
  const fleet = started(1, 5);
  fleet.setKeyLimit(3, "", "user:1", Limit.perSecond(5));
  const tookMs = fleet.runUntilConverged(SETTLE_MS);
  assert.ok(tookMs !== undefined && tookMs <= 3_000, `converged in ${tookMs} ms`);
  assert.deepEqual(everyNode(fleet, "user:1"), Array(5).fill("5/s"));
  for (let i = 0; i < 5; i++) assert.equal(fleet.stats(i)!.rules.live, 1);
});

test("classes, shadows, the default limit and dry run travel too", () => {
  const fleet = started(2, 5);
  fleet.change(0, { kind: "class", className: "pro", key: "", value: Limit.perMinute(600) });
  fleet.change(1, { kind: "shadow", className: "pro", key: "", value: Limit.perMinute(60) });
  fleet.change(2, { kind: "defaultLimit", className: "", key: "", value: Limit.perSecond(7) });
  fleet.change(4, { kind: "dryRun", className: "", key: "", value: true });
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  for (let i = 0; i < 5; i++) {
    const book = fleet.book(i);
    assert.equal(String(book.classes().find(([n]) => n === "pro")?.[1]), "600/min", `node ${i}`);
    assert.equal(String(book.shadows().find(([n]) => n === "pro")?.[1]), "60/min", `node ${i}`);
    assert.equal(String(book.defaultLimit()), "7/s");
    assert.equal(fleet.dryRun(i), true);
  }
  // A removed default limit and dry run go back to what each node started with.
  fleet.change(3, { kind: "defaultLimit", className: "", key: "", value: undefined });
  fleet.change(3, { kind: "dryRun", className: "", key: "", value: undefined });
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  for (let i = 0; i < 5; i++) {
    assert.equal(String(fleet.book(i).defaultLimit()), "1000/s");
    assert.equal(fleet.dryRun(i), false);
  }
});

test("concurrent changes of one rule on different nodes converge to the newest version", () => {
  // Node 1's wall clock is 50 ms ahead: its change, made at the same
  // moment as node 4's, is the newer by version and must win everywhere.
  const fleet = started(3, 5, { wallSkewMs: (i: number) => (i === 1 ? 50 : 0) });
  fleet.setKeyLimit(4, "", "k", Limit.perSecond(40));
  fleet.setKeyLimit(1, "", "k", Limit.perSecond(10));
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  assert.deepEqual(everyNode(fleet, "k"), Array(5).fill("10/s"));
  // With equal clocks the tie goes by member ID, the same on every node.
  const tie = started(4, 5);
  tie.setKeyLimit(0, "", "k", Limit.perSecond(1));
  tie.setKeyLimit(2, "", "k", Limit.perSecond(2));
  assert.notEqual(tie.runUntilConverged(SETTLE_MS), undefined);
  const values = new Set(everyNode(tie, "k"));
  assert.equal(values.size, 1, `one value: ${[...values]}`);
});

test("a removal wins over an older set and loses to a newer one", () => {
  const fleet = started(5, 5);
  fleet.setKeyLimit(0, "", "k", Limit.perSecond(3));
  fleet.runUntilConverged(SETTLE_MS);
  fleet.runUntil(fleet.nowMs + 1_000);
  fleet.setKeyLimit(2, "", "k", undefined);
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  assert.deepEqual(everyNode(fleet, "k"), Array(5).fill(undefined));
  assert.ok(fleet.stats(4)!.rules.removed >= 1, "the removal is held as a tombstone");
  fleet.runUntil(fleet.nowMs + 1_000);
  fleet.setKeyLimit(4, "", "k", Limit.perSecond(9));
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  assert.deepEqual(everyNode(fleet, "k"), Array(5).fill("9/s"));
  // A removal made on a node whose clock is behind, concurrently with a set, loses to it.
  const race = started(6, 5, { wallSkewMs: (i: number) => (i === 3 ? -100 : 0) });
  race.setKeyLimit(1, "", "r", Limit.perSecond(2));
  race.setKeyLimit(3, "", "r", undefined);
  assert.notEqual(race.runUntilConverged(SETTLE_MS), undefined);
  assert.deepEqual(everyNode(race, "r"), Array(5).fill("2/s"));
});

test("reordered and replayed changes leave the newest in place and apply once", () => {
  const fleet = started(7, 3);
  const origin = { hi: addressOf(1).id.hi, lo: addressOf(1).id.lo };
  const at = fleet.nowMs * 1_024;
  const older: RuleEntry = {
    kind: "keyLimit",
    className: "",
    key: "k",
    value: Limit.perSecond(1),
    version: { clock: at + 1, origin },
  };
  const newer: RuleEntry = {
    ...older,
    value: Limit.perSecond(2),
    version: { clock: at + 2, origin },
  };
  const before = fleet.stats(0)!.rules.applied;
  fleet.inject(0, addressOf(1), changeDatagram(1, [newer]));
  fleet.inject(0, addressOf(1), changeDatagram(1, [older]));
  fleet.inject(0, addressOf(1), changeDatagram(1, [newer, newer]));
  fleet.runUntil(fleet.nowMs + 1);
  assert.equal(keyLimitOf(fleet, 0, "k"), "2/s");
  assert.equal(fleet.stats(0)!.rules.applied - before, 1, "applied once");
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  assert.deepEqual(everyNode(fleet, "k"), Array(3).fill("2/s"));
});

test("under Required a forged change is refused and counted", () => {
  const secret = new Secret(new Uint8Array(32).fill(7));
  const fleet = started(8, 3, { auth: authConfig("required", [secret]) });
  const forged = entryBy(fleet, 1, "victim");
  const bytes = changeDatagram(1, [forged]);
  const signedWrong = new Uint8Array(bytes.length + 16);
  signedWrong.set(bytes);
  signedWrong[1] |= 1; // flagged signed, with a tag of zeros
  fleet.inject(0, addressOf(1), bytes);
  fleet.inject(0, addressOf(1), signedWrong);
  fleet.runUntil(fleet.nowMs + 1_000);
  assert.deepEqual(everyNode(fleet, "victim"), [undefined, undefined, undefined]);
  assert.deepEqual(fleet.rejected(0), { unsigned: 1, badTag: 1 });
});

test("under Off anyone who reaches the port changes rules; malformed sections and a gone member's are counted", () => {
  const open = started(9, 3);
  // What the README says plainly: unsigned, a newcomer's word is taken.
  open.inject(0, addressOf(40), changeDatagram(40, [entryBy(open, 40, "taken")]));
  open.runUntil(open.nowMs + 1);
  assert.equal(keyLimitOf(open, 0, "taken"), "1/s");
  // A datagram of a member that has left, replayed: no live member's, dropped.
  open.leave(2);
  open.runUntil(open.nowMs + 1_000);
  const strangers = open.stats(0)!.rules.strangers;
  open.inject(0, addressOf(2), changeDatagram(2, [entryBy(open, 2, "disowned")]));
  const malformed = open.stats(0)!.rules.malformed;
  const broken = changeDatagram(1, [entryBy(open, 1, "broken")], 1, 3); // its entry cut short
  open.inject(0, addressOf(1), broken);
  open.runUntil(open.nowMs + 1);
  assert.equal(keyLimitOf(open, 0, "disowned"), undefined);
  assert.equal(keyLimitOf(open, 0, "broken"), undefined);
  assert.equal(open.stats(0)!.rules.strangers, strangers + 1, "a gone member's section is counted");
  assert.equal(open.stats(0)!.rules.malformed, malformed + 1, "a malformed section is counted");
});

test("a change stamped far ahead of the receiver's clock is refused: no datagram pins a rule", () => {
  const fleet = started(10, 3);
  const pinned = entryBy(fleet, 1, "k", 3_600_000);
  fleet.inject(0, addressOf(1), changeDatagram(1, [pinned]));
  fleet.runUntil(fleet.nowMs + 1);
  assert.equal(keyLimitOf(fleet, 0, "k"), undefined);
  assert.equal(fleet.stats(0)!.rules.refused, 1);
});

test("tombstones expire after their lifetime, and a replayed old set does not bring the rule back", () => {
  const fleet = started(11, 3);
  fleet.setKeyLimit(0, "", "k", Limit.perSecond(3));
  fleet.runUntilConverged(SETTLE_MS);
  const oldSet = entryBy(fleet, 0, "k", -1);
  fleet.setKeyLimit(1, "", "k", undefined);
  fleet.runUntilConverged(SETTLE_MS);
  fleet.runUntil(fleet.nowMs + TOMBSTONE_MS + 1_000);
  for (let i = 0; i < 3; i++) assert.equal(fleet.stats(i)!.rules.removed, 0, `node ${i}`);
  fleet.inject(2, addressOf(0), changeDatagram(0, [oldSet]));
  fleet.runUntil(fleet.nowMs + 1_000);
  assert.equal(keyLimitOf(fleet, 2, "k"), undefined);
  assert.ok(fleet.stats(2)!.rules.refused >= 1);
});

test("a newcomer learns the whole table before it leaves its hold", () => {
  // 50 ms each way: the transfer takes longer than allocation's own hold.
  const fleet = started(12, 5, { faults: { latencyMs: 50 } });
  for (let i = 0; i < 2_000; i++) fleet.setKeyLimit(i % 5, "", `user:${i}`, Limit.perSecond(1 + i));
  assert.notEqual(fleet.runUntilConverged(60_000), undefined, "the fleet agrees");
  const late = fleet.add({ seeds: [0] });
  let sawHeld = false;
  for (let t = 0; t < 20_000; t += 10) {
    fleet.runUntil(fleet.nowMs + 10);
    const s = fleet.stats(late)!;
    if (s.held) {
      sawHeld = true;
      continue;
    }
    assert.equal(
      fleet.book(late).keyLimits().length,
      2_000,
      `out of hold at ${t} ms with the whole table`,
    );
    break;
  }
  assert.ok(sawHeld, "the newcomer was held");
  assert.equal(fleet.stats(late)!.rules.digest, fleet.stats(0)!.rules.digest);
});

test("a partition during a change heals to one value", () => {
  const fleet = started(13, 6);
  fleet.topology.partition([[0, 1, 2], [3, 4, 5]]);
  fleet.setKeyLimit(1, "", "k", Limit.perSecond(11));
  fleet.runUntil(fleet.nowMs + 200);
  fleet.setKeyLimit(4, "", "k", Limit.perSecond(44));
  fleet.runUntil(fleet.nowMs + 5_000);
  assert.deepEqual(everyNode(fleet, "k"), ["11/s", "11/s", "11/s", "44/s", "44/s", "44/s"]);
  fleet.topology.heal();
  assert.notEqual(fleet.runUntilConverged(30_000), undefined);
  assert.deepEqual(everyNode(fleet, "k"), Array(6).fill("44/s"), "the later change wins");
});

test("a quiet fleet sends no more datagrams with fleet rules than without", () => {
  const counts = [false, true].map((fleetRules) => {
    const fleet = started(14, 5, { fleetRules });
    fleet.runUntil(fleet.nowMs + 5_000);
    fleet.resetTraffic();
    fleet.runUntil(fleet.nowMs + 20_000);
    return fleet.totalTraffic().datagrams;
  });
  assert.ok(counts[1] <= counts[0] * 1.02, `without ${counts[0]}, with ${counts[1]}`);
});

test("a rollout: members that share rules among others that do not are not held, and agree", () => {
  // Nodes 0 and 1 run without fleet rules (an earlier release); 2 to 4 with.
  const fleet = new RulesFleet({ seed: 15, size: 5, fleetRules: (i: number) => i >= 2 });
  fleet.runUntil(10_000);
  for (let i = 2; i < 5; i++) {
    assert.equal(fleet.stats(i)!.rules.learning, false, `node ${i} learning`);
    assert.equal(fleet.stats(i)!.held, false, `node ${i} held`);
  }
  fleet.setKeyLimit(3, "", "k", Limit.perSecond(2));
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  assert.deepEqual(everyNode(fleet, "k"), [undefined, undefined, "2/s", "2/s", "2/s"]);
  // A newcomer that joins through a member without fleet rules still learns from one with.
  const late = fleet.add({ seeds: [0] });
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  assert.equal(keyLimitOf(fleet, late, "k"), "2/s");
});

test("at fifty nodes every member hears the rules and learns them by transfer", () => {
  // Fifty members' relayed demand reports fill a probe: the rules must still ride along.
  const fleet = new RulesFleet({ seed: 17, size: 50 });
  fleet.runUntil(3_000);
  const all = Array.from({ length: 50 }, (_, i) => i);
  assert.deepEqual(all.filter((i) => fleet.stats(i)!.rules.learning), []);
  // A fresh fleet has only learners: the lowest ID each hears goes first,
  // and the rest learn from those by transfer.
  const taught = all.filter((i) => fleet.stats(i)!.rules.transfers > 0);
  assert.ok(taught.length >= 35, `${taught.length} learned by transfer`);
});
