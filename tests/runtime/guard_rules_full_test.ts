/**
 * A change the fleet's rules table has no room for is made nowhere
 * (issue 36): the guard's setters ask before changing the book, and a bulk
 * change the table cannot take puts the book back as it was.
 */

import { test } from "node:test";
import assert from "node:assert/strict";
import { Limit } from "../../src/core/limit.ts";
import { LimitBook } from "../../src/core/rules.ts";
import { Enforcer } from "../../src/core/enforcer.ts";
import { RateguardError } from "../../src/core/errors.ts";
import type { RuleChange } from "../../src/core/fleet_node.ts";
import type { GossipTask } from "../../src/runtime/gossip.ts";
import { bookParts, GuardRules } from "../../src/runtime/guard_rules.ts";

/** The rule setters over a fleet node whose table has room for `room` new rules. */
function guardRules(room: number) {
  const book = new LimitBook(Limit.perSecond(10), { maxClasses: 8, maxKeyLimits: 64 });
  book.setClass("pro", Limit.perSecond(5));
  book.setKeyLimit("pro", "t:0", Limit.perSecond(1));
  const enforcer = new Enforcer(book, { capacity: 4, overflowScale: 0.5 });
  const shared: RuleChange[] = [];
  const node = {
    sharesRules: true,
    admitRule(change: RuleChange) {
      this.admitRules([change]);
    },
    admitRules(changes: Iterable<RuleChange>) {
      if ([...changes].length > room) throw new RateguardError("RulesFull", "full: no room");
    },
    shareRule(_nowMs: number, change: RuleChange) {
      shared.push(change);
      return true;
    },
  };
  const gossip = { node } as unknown as GossipTask;
  return { book, shared, rules: new GuardRules({ book, enforcer, gossip, clock: () => 0 }) };
}

const refused = (e: unknown) => e instanceof RateguardError && e.code === "RulesFull";

test("a setter refused for room leaves the book as it was and shares nothing", () => {
  const { book, shared, rules: d } = guardRules(0);
  const before = JSON.stringify(bookParts(book));
  assert.throws(() => d.setLimit(Limit.perSecond(500)), refused);
  assert.throws(() => d.setKeyLimit("t:1", Limit.perSecond(2), { class: "pro" }), refused);
  assert.throws(() => d.setClass("free", Limit.perSecond(1)), refused);
  assert.equal(String(book.defaultLimit()), "10/s");
  assert.equal(JSON.stringify(bookParts(book)), before);
  assert.deepEqual(shared, []);
});

test("a bulk change the table cannot take is put back, whole", () => {
  const { book, shared, rules: d } = guardRules(2);
  const before = JSON.stringify(bookParts(book));
  const many = Array.from({ length: 5 }, (_, i) => ["pro", `t:${i}`, Limit.perSecond(3)] as const);
  assert.throws(() => d.setKeyLimits(many), refused);
  assert.equal(JSON.stringify(bookParts(book)), before);
  assert.deepEqual(shared, []);
  d.setKeyLimits(many.slice(0, 2));
  assert.equal(shared.length, 2, "one that fits is made and shared");
});
