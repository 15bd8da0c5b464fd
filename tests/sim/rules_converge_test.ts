/**
 * Fleet rules converge whatever the rules and the order members learn in
 * (issue 31): every rule a member can set is one its peers take, and one
 * bad entry never drops its neighbours.
 */

import { test } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { KeyLimit } from "../../src/core/key_limit.ts";
import { Limit } from "../../src/core/limit.ts";
import { LimitBook } from "../../src/core/rules.ts";
import { PUBLIC_HASH_KEY } from "../../src/core/hash.ts";
import { encode } from "../../src/proto/mod.ts";
import {
  BlockedUntil,
  decodeRules,
  type RuleEntry,
  RulesSync,
  SectionWriter,
} from "../../src/core/rules_sync/mod.ts";
import { RulesFleet } from "../../src/sim/faces/rules_fleet.ts";
import { bookParts, changesBetween } from "../../src/runtime/guard_rules.ts";
import { addressOf } from "../../src/sim/driver/names.ts";

const SETTLE_MS = 10_000;

function started(seed: number, size: number): RulesFleet {
  const fleet = new RulesFleet({ seed, size });
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined, "the fleet formed");
  fleet.runUntil(fleet.nowMs + 5_000); // every member knows every other
  return fleet;
}

/** What node `index`'s book holds, as text, to compare members. */
function bookOf(fleet: RulesFleet, index: number): string {
  const book = fleet.book(index);
  return JSON.stringify({
    classes: book.classes().map(([n, l]) => [n, String(l)]),
    shadows: book.shadows().map(([n, l]) => [n, String(l)]),
    keyLimits: book.keyLimits().map(([c, k, l]) => [c, k, String(l)]),
    defaultLimit: String(book.defaultLimit()),
  });
}

test("a shadow on the default class reaches every member, with the changes beside it", () => {
  const fleet = started(31, 3);
  // One admin burst on one member: all of it leaves in the same datagrams.
  fleet.change(0, { kind: "class", className: "pro", key: "", value: Limit.perMinute(600) });
  fleet.change(0, { kind: "shadow", className: "", key: "", value: Limit.perSecond(50) });
  fleet.change(0, { kind: "keyLimit", className: "pro", key: "t:1", value: Limit.perSecond(9) });
  fleet.block(0, "ip:1", 600_000);
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined, "the fleet agrees");
  for (let i = 0; i < 3; i++) {
    assert.equal(bookOf(fleet, i), bookOf(fleet, 0), `node ${i}'s book`);
    assert.equal(fleet.check(i, "ip:1").allowed, false, `node ${i} blocks ip:1`);
    assert.equal(fleet.stats(i)!.rules.malformed, 0, `node ${i} refused nothing`);
  }
  assert.deepEqual(fleet.book(2).shadows().map(([n, l]) => [n, String(l)]), [["", "50/s"]]);
});

/** A gossip datagram from member `index` carrying `entries`, each written as it is. */
function datagramOf(index: number, entries: RuleEntry[]): Uint8Array {
  const writer = new SectionWriter(1_000, false, { live: 0, hi: 0, lo: 0 });
  for (const entry of entries) assert.ok(writer.change(entry));
  const address = addressOf(index);
  return encode({
    type: "gossip",
    sender: { id: address.id, address, incarnation: 0 },
    records: [],
    rules: writer.finish(),
  });
}

test("an entry that does not fit its kind is skipped and counted, and its neighbours are taken", () => {
  const fleet = started(32, 3);
  const id = addressOf(1).id;
  const version = (n: number) => ({
    clock: fleet.nowMs * 1_024 + n,
    origin: { hi: id.hi, lo: id.lo },
  });
  const entries: RuleEntry[] = [
    {
      kind: "keyLimit",
      className: "",
      key: "before",
      value: Limit.perSecond(2),
      version: version(1),
    },
    // A class rule for the default class: no member can make one, so it is malformed.
    { kind: "class", className: "", key: "", value: Limit.perSecond(3), version: version(2) },
    {
      kind: "keyLimit",
      className: "",
      key: "after",
      value: Limit.perSecond(4),
      version: version(3),
    },
  ];
  fleet.inject(0, addressOf(1), datagramOf(1, entries));
  fleet.runUntil(fleet.nowMs + 1);
  const keys = fleet.book(0).keyLimits().map(([, k, l]) => `${k}=${l}`).sort();
  assert.deepEqual(keys, ["after=4/s", "before=2/s"]);
  const stats = fleet.stats(0)!;
  assert.equal(stats.rules.malformed, 1);
  assert.match(stats.rules.lastRefusal, /class rule needs a class name/);
});

test("every rule a book takes is one a peer takes from the wire, the default class's included", () => {
  const limit = fc.tuple(
    fc.constantFrom("perSecond", "perMinute", "perHour"),
    fc.integer({ min: 1, max: 4_294_967_295 }),
    fc.option(fc.integer({ min: 0, max: 4_194_303 })),
  ).map(([unit, count, burst]) => {
    try {
      const base = Limit[unit as "perSecond"](count);
      return burst === null ? base : base.burst(burst);
    } catch {
      return Limit.perSecond(1); // a rate the clock cannot hold: no book takes it either
    }
  });
  const className = fc.oneof(fc.constant(""), fc.constant("pro"), fc.string({ minLength: 1 }));
  const key = fc.string({ minLength: 1 });
  const change = fc.oneof(
    fc.record({ kind: fc.constant("class"), className, key: fc.constant(""), value: limit }),
    fc.record({ kind: fc.constant("shadow"), className, key: fc.constant(""), value: limit }),
    fc.record({
      kind: fc.constant("keyLimit"),
      className,
      key,
      value: fc.oneof(limit, className.map((c) => KeyLimit.class(c))),
    }),
    fc.record({
      kind: fc.constant("defaultLimit"),
      className: fc.constant(""),
      key: fc.constant(""),
      value: limit,
    }),
    fc.record({
      kind: fc.constant("dryRun"),
      className: fc.constant(""),
      key: fc.constant(""),
      value: fc.boolean(),
    }),
    fc.record({
      kind: fc.constant("block"),
      className,
      key,
      value: fc.integer({ min: 1, max: 2 ** 40 }).map((ms) => new BlockedUntil(ms)),
    }),
  ) as fc.Arbitrary<Omit<RuleEntry, "version">>;
  fc.assert(
    fc.property(fc.array(fc.tuple(change, fc.boolean())), (changes) => {
      const book = new LimitBook(Limit.perSecond(10), { maxClasses: 64, maxKeyLimits: 1_000 });
      const sync = new RulesSync({
        self: { hi: 1, lo: 2 },
        maxEntries: 10_000,
        protocolPeriodMs: 200,
        wallOffsetMs: 1_700_000_000_000,
        ticketKey: PUBLIC_HASH_KEY,
        apply: () => {},
      }, false);
      for (const [c, remove] of changes) {
        // Only what the book takes is a change a member can make.
        try {
          const v = c.value;
          // A removal of what is not there changes nothing and is not shared (as `GuardRules`).
          let changed = true;
          if (c.kind === "class") {
            if (remove) changed = book.removeClass(c.className);
            else book.setClass(c.className, v as Limit);
          }
          if (c.kind === "shadow") {
            if (!book.hasClass(c.className)) book.setClass(c.className, Limit.perSecond(1));
            book.setShadow(c.className, remove ? null : v as Limit);
          }
          if (c.kind === "keyLimit") {
            if (remove) changed = book.removeKeyLimit(c.className, c.key);
            else book.setKeyLimit(c.className, c.key, v as Limit);
          }
          if (c.kind === "defaultLimit") book.setLimit(v as Limit);
          if (!changed) continue;
        } catch {
          continue;
        }
        const value = remove && c.kind !== "defaultLimit" && c.kind !== "dryRun"
          ? undefined
          : c.value;
        const entry = sync.local(1_000, { ...c, value });
        assert.ok(entry, `${c.kind} ${JSON.stringify(c.className)} is shared`);
        const writer = new SectionWriter(1_400, false, sync.digest());
        assert.ok(writer.change(entry));
        const section = decodeRules(writer.finish())!;
        assert.deepEqual(section.refusals, [], `${c.kind} ${JSON.stringify(c.className)}`);
        assert.equal(section.cut, undefined);
        assert.equal(section.changes.length, 1);
        assert.equal(String(section.changes[0].value), String(entry.value));
      }
    }),
    { seed: 31, numRuns: 200 },
  );
});

test("removing a class removes its key limits, with one rule, on every member", () => {
  const fleet = started(33, 3);
  fleet.change(0, { kind: "class", className: "pro", key: "", value: Limit.perMinute(600) });
  fleet.change(0, { kind: "keyLimit", className: "pro", key: "t:1", value: Limit.perSecond(9) });
  fleet.change(0, { kind: "keyLimit", className: "", key: "t:2", value: Limit.perSecond(8) });
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  const old = fleet.stats(0)!;
  assert.equal(old.rules.live, 3);
  fleet.change(1, { kind: "class", className: "pro", key: "", value: undefined });
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined, "the fleet agrees");
  for (let i = 0; i < 3; i++) {
    const keys = fleet.book(i).keyLimits().map(([c, k]) => `${c}/${k}`);
    assert.deepEqual(keys, ["/t:2"], `node ${i} keeps only the default class's key limit`);
    assert.equal(fleet.stats(i)!.rules.live, 1, `node ${i}'s table`);
  }
  // The class comes back: its old key limits do not.
  fleet.change(2, { kind: "class", className: "pro", key: "", value: Limit.perMinute(60) });
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  for (let i = 0; i < 3; i++) assert.equal(fleet.book(i).keyLimits().length, 1, `node ${i}`);
  // A newcomer learns the same.
  fleet.add();
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  assert.deepEqual(fleet.book(3).keyLimits().map(([c, k]) => `${c}/${k}`), ["/t:2"]);
});

test("a key limit set before its class's removal and heard after it stays removed", () => {
  const fleet = started(34, 3);
  fleet.change(0, { kind: "class", className: "pro", key: "", value: Limit.perMinute(600) });
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  const id = addressOf(1).id;
  const early: RuleEntry = {
    kind: "keyLimit",
    className: "pro",
    key: "late",
    value: Limit.perSecond(3),
    version: { clock: (fleet.nowMs - 1) * 1_024, origin: { hi: id.hi, lo: id.lo } },
  };
  fleet.change(0, { kind: "class", className: "pro", key: "", value: undefined });
  fleet.runUntil(fleet.nowMs + 1_000);
  fleet.inject(2, addressOf(1), datagramOf(1, [early]));
  fleet.runUntil(fleet.nowMs + 1);
  assert.deepEqual(fleet.book(2).keyLimits(), []);
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
});

test("a key limit newer than its class's removal, heard before it, stays in the book", () => {
  const fleet = started(35, 3);
  fleet.change(0, { kind: "class", className: "pro", key: "", value: Limit.perMinute(600) });
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  const id = addressOf(1).id;
  const at = (ms: number, n: number) => ({
    clock: ms * 1_024 + n,
    origin: { hi: id.hi, lo: id.lo },
  });
  const nowMs = fleet.nowMs;
  const removal: RuleEntry = {
    kind: "class",
    className: "pro",
    key: "",
    value: undefined,
    version: at(nowMs, 1),
  };
  const newer: RuleEntry = {
    kind: "keyLimit",
    className: "pro",
    key: "k",
    value: Limit.perSecond(3),
    version: at(nowMs, 2),
  };
  // Member 2 hears them out of order, the others in order: all hold the key limit.
  fleet.inject(2, addressOf(1), datagramOf(1, [newer, removal]));
  fleet.inject(0, addressOf(1), datagramOf(1, [removal, newer]));
  fleet.runUntil(fleet.nowMs + 1);
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(
      fleet.book(i).keyLimits().map(([c, k]) => `${c}/${k}`),
      ["pro/k"],
      `node ${i}`,
    );
    assert.equal(fleet.book(i).hasClass("pro"), false);
  }
});

test("a book's class removal, one or in bulk, takes its key limits, and shares one rule", () => {
  const book = new LimitBook(Limit.perSecond(10), { maxClasses: 8, maxKeyLimits: 8 });
  book.setClass("pro", Limit.perSecond(5));
  book.setClass("team", Limit.perSecond(6));
  book.setKeyLimit("pro", "a", Limit.perSecond(1));
  book.setKeyLimit("team", "b", Limit.perSecond(2));
  book.setKeyLimit("", "c", Limit.perSecond(3));
  const before = bookParts(book);
  book.setClasses([["team", Limit.perSecond(6)]]);
  assert.deepEqual(book.keyLimits().map(([c, k]) => `${c}/${k}`), ["team/b", "/c"]);
  assert.deepEqual(changesBetween(before, bookParts(book)).map((c) => `${c.kind} ${c.className}`), [
    "class pro",
  ]);
  assert.ok(book.removeClass("team"));
  assert.deepEqual(book.keyLimits().map(([c, k]) => `${c}/${k}`), ["/c"]);
  // Room freed: the bound counts what is held.
  for (let i = 0; i < 7; i++) book.setKeyLimit("", `k${i}`, Limit.perSecond(1));
});

/** Whether every running member's book holds the class `pro`. */
function everyHasPro(fleet: RulesFleet): boolean[] {
  return Array.from({ length: fleet.size }, (_, i) => fleet.book(i).hasClass("pro"));
}

test("members that learn from each other at once keep learning, and take rules older than an hour", () => {
  const fleet = started(36, 2);
  fleet.change(1, { kind: "class", className: "pro", key: "", value: Limit.perMinute(600) });
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  fleet.runUntil(fleet.nowMs + 61 * 60_000);
  // A deploy with surge: member 0 restarts while a new member joins through
  // it, and for a while the two hear only each other.
  fleet.crash(0);
  fleet.topology.partition([[0, 2], [1]]);
  fleet.restart(0);
  fleet.add({ seeds: [0] });
  // Long enough to pull each other's (empty) table, not for a learner to go first.
  fleet.runUntil(fleet.nowMs + 800);
  assert.equal(fleet.stats(0)!.rules.learning, true, "member 0 learned nothing from a learner");
  assert.equal(fleet.stats(2)!.rules.learning, true, "nor member 2");
  fleet.runUntil(fleet.nowMs + 2_200);
  fleet.topology.heal();
  assert.notEqual(fleet.runUntilConverged(60_000), undefined, "the fleet agrees");
  assert.deepEqual(everyHasPro(fleet), [true, true, true]);
  for (let i = 0; i < 3; i++) assert.equal(fleet.stats(i)!.rules.refused, 0, `member ${i}`);
});

test("a member that stopped learning with an empty table still takes the fleet's older rules", () => {
  const fleet = started(37, 2);
  fleet.change(1, { kind: "class", className: "pro", key: "", value: Limit.perMinute(600) });
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  fleet.runUntil(fleet.nowMs + 61 * 60_000);
  // Cut off long enough to stop learning alone, then back.
  fleet.crash(0);
  fleet.topology.partition([[0, 2], [1]]);
  fleet.restart(0);
  fleet.add({ seeds: [0] });
  fleet.runUntil(fleet.nowMs + 60_000);
  const learning = [0, 2].map((i) => fleet.stats(i)!.rules.learning);
  assert.deepEqual(
    learning,
    [false, false],
    "with none that knows, one goes first, then the other",
  );
  fleet.topology.heal();
  assert.notEqual(fleet.runUntilConverged(120_000), undefined, "the fleet agrees");
  assert.deepEqual(everyHasPro(fleet), [true, true, true]);
});

test("a member out of step for longer than the bound says so, with the digests, and keeps pulling", () => {
  const fleet = started(38, 3);
  fleet.change(0, { kind: "keyLimit", className: "", key: "gone", value: Limit.perSecond(1) });
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  const id = addressOf(2).id;
  // Made before the removal below: once every member has let that go, a set this old is stale.
  const old: RuleEntry = {
    kind: "keyLimit",
    className: "",
    key: "old",
    value: Limit.perSecond(2),
    version: { clock: fleet.nowMs * 1_024, origin: { hi: id.hi, lo: id.lo } },
  };
  fleet.runUntil(fleet.nowMs + 1_000);
  fleet.change(0, { kind: "keyLimit", className: "", key: "gone", value: undefined });
  fleet.runUntil(fleet.nowMs + 61 * 60_000);
  // Member 1 starts afresh, and a member cut off for over an hour hands it the old rule.
  fleet.crash(1);
  fleet.restart(1);
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  fleet.inject(1, addressOf(2), datagramOf(2, [old]));
  fleet.runUntil(fleet.nowMs + 30_000);
  const s = fleet.stats(1)!;
  assert.equal(s.rules.outOfStep, false, "half a minute of disagreement is a change spreading");
  assert.ok(s.rules.apartMs > 0);
  fleet.runUntil(fleet.nowMs + 40_000);
  for (const i of [0, 1, 2]) {
    const t = fleet.stats(i)!;
    assert.equal(t.rules.outOfStep, true, `member ${i} says it is out of step`);
    assert.match(t.rules.outOfStepReason, new RegExp(`rules digest ${t.rules.digest} .* differed`));
  }
  const transfers = fleet.stats(1)!.rules.transfers;
  fleet.runUntil(fleet.nowMs + 60_000);
  assert.ok(fleet.stats(1)!.rules.transfers > transfers, "it keeps pulling");
  // Reissuing the removal ends it.
  fleet.change(0, { kind: "keyLimit", className: "", key: "old", value: undefined });
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  fleet.runUntil(fleet.nowMs + 2_000);
  for (const i of [0, 1, 2]) {
    assert.equal(fleet.stats(i)!.rules.outOfStep, false, `member ${i} is in step again`);
    assert.equal(fleet.stats(i)!.rules.outOfStepReason, "");
  }
});

test("five members restarting and joining at once all learn the rules set long before", () => {
  const fleet = started(39, 4);
  fleet.change(0, { kind: "class", className: "pro", key: "", value: Limit.perMinute(600) });
  fleet.change(1, { kind: "shadow", className: "", key: "", value: Limit.perSecond(50) });
  fleet.change(2, { kind: "keyLimit", className: "pro", key: "t:1", value: Limit.perSecond(9) });
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  fleet.runUntil(fleet.nowMs + 61 * 60_000);
  // A deploy with surge: three members restart and two join, all at once,
  // the newcomers through members that are restarting; member 3 stays.
  for (const i of [0, 1, 2]) fleet.crash(i);
  for (const i of [0, 1, 2]) fleet.restart(i);
  fleet.add({ seeds: [0] });
  fleet.add({ seeds: [1] });
  assert.notEqual(fleet.runUntilConverged(30_000), undefined, "the fleet agrees");
  for (let i = 0; i < 6; i++) {
    assert.equal(bookOf(fleet, i), bookOf(fleet, 3), `member ${i}'s book`);
    assert.equal(fleet.stats(i)!.rules.refused, 0, `member ${i} refused nothing`);
  }
  assert.ok(fleet.book(5).hasClass("pro"));
});

test("a whole fleet of five restarting at once comes back in step, none held learning", () => {
  const fleet = started(40, 5);
  fleet.change(0, { kind: "class", className: "pro", key: "", value: Limit.perMinute(600) });
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  for (let i = 0; i < 5; i++) fleet.crash(i);
  for (let i = 0; i < 5; i++) fleet.restart(i);
  // Nobody knows the fleet's changes now: each is back to its start-up rules, and they agree.
  assert.notEqual(fleet.runUntilConverged(30_000), undefined, "the fleet agrees");
  for (let i = 0; i < 5; i++) assert.equal(fleet.stats(i)!.rules.learning, false);
});

test("a change the book refuses for its bounds is counted with its reason", () => {
  const fleet = new RulesFleet({ seed: 41, size: 2, maxKeyLimits: 1 });
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  fleet.change(0, { kind: "keyLimit", className: "", key: "a", value: Limit.perSecond(1) });
  fleet.book(1).setKeyLimit("", "own", Limit.perSecond(2)); // node 1's room, taken by its own
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  const s = fleet.stats(1)!;
  assert.equal(s.rules.refused, 1);
  assert.match(
    s.rules.lastRefusal,
    /^refused by this instance's book: keyLimit "": .*maxKeyLimits/,
  );
});

test("a page's bad entry is skipped alone, and a section cut short keeps what came before", () => {
  const origin = { hi: 7, lo: 9 };
  const entry = (key: string, className = ""): RuleEntry => ({
    kind: "keyLimit",
    className,
    key,
    value: Limit.perSecond(1),
    version: { clock: 2 ** 40, origin },
  });
  // A keyLimit with no key fits no kind: written as it is, read and skipped.
  const writer = new SectionWriter(1_200, false, { live: 0, hi: 0, lo: 0 });
  writer.page({
    from: 0,
    next: 3,
    end: 3,
    ticket: { hi: 0, lo: 1 },
    entries: [entry("a"), { ...entry(""), kind: "class" }, entry("c")],
  });
  const page = decodeRules(writer.finish())!;
  assert.deepEqual(page.page?.entries.map((e) => e.key), ["a", "c"]);
  assert.equal(page.refusals.length, 1);
  const changes = new SectionWriter(1_200, false, { live: 0, hi: 0, lo: 0 });
  for (const key of ["x", "y"]) changes.change(entry(key));
  const bytes = changes.finish();
  const cut = decodeRules(bytes.subarray(0, bytes.length - 3))!;
  assert.deepEqual(cut.changes.map((e) => e.key), ["x"]);
  assert.match(cut.cut ?? "", /cut short/);
});
