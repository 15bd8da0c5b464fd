// The block set on the enforcer itself: blocks take no place of the key
// table, whatever the call that meets a blocked key, and the one exception
// (a hot key, whose slot the allocator holds) is bounded by the set too.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Enforcer } from "../../src/core/enforcer.ts";
import { PUBLIC_HASH_KEY } from "../../src/core/hash.ts";
import { Limit } from "../../src/core/limit.ts";
import { LimitBook } from "../../src/core/rules.ts";

function enforcer(options: { capacity?: number; maxBlocks?: number; fleet?: boolean } = {}) {
  const book = new LimitBook(Limit.perSecond(10).burst(5), { maxClasses: 4, maxKeyLimits: 4 });
  book.setClass("pro", Limit.perSecond(10).burst(5));
  return new Enforcer(book, {
    capacity: options.capacity ?? 4,
    overflowScale: 0.5,
    maxBlocks: options.maxBlocks ?? 8,
    fleet: options.fleet ? { hashKey: PUBLIC_HASH_KEY } : undefined,
  });
}

describe("the block set", () => {
  it("no call that meets a blocked key gives it a place: check, checkTraced, checkAll, peek", () => {
    const e = enforcer({ capacity: 2 });
    for (const key of ["a", "b", "c"]) e.block("", key, 10_000, 0);
    assert.equal(e.check("", "a", 1, 1).allowed, false);
    assert.equal(e.checkTraced("", "b", 1, 1).decision.allowed, false);
    assert.equal(e.checkAll([{ key: "c" }, { key: "fresh" }], 1).allowed, false);
    assert.equal(e.peek("", "a", 1).allowed, false);
    assert.equal(e.table.size, 1, "only the fresh key of the batch has a place");
    assert.equal(e.check("", "new", 1, 2).allowed, true);
    assert.equal(e.table.size, 2);
    assert.equal(e.counters.overflowed, 0);
    assert.equal(e.blockedKeys(2), 3);
  });

  it("a block is of its class: the same key in another class is admitted", () => {
    const e = enforcer();
    e.block("pro", "k", 10_000, 0);
    assert.equal(e.check("pro", "k", 1, 1).allowed, false);
    assert.equal(e.check("", "k", 1, 1).allowed, true);
    assert.equal(e.blockedForMs("", "k", 1), 0);
    assert.equal(e.blockedForMs("pro", "k", 1), 9_999);
  });

  it("a reset key takes its place back; a lifted fleet block is placed at its next check", () => {
    const e = enforcer();
    e.block("", "r", 10_000, 0);
    e.block("", "f", 10_000, 0);
    assert.equal(e.reset("", "r", 1), true);
    assert.equal(e.table.size, 1, "the reset key has its place back");
    assert.equal(e.check("", "r", 1, 1).allowed, true);
    assert.equal(e.blockUntil("", "f", 1, 1), true, "lifted");
    assert.equal(e.blockedKeys(1), 0);
    assert.equal(e.check("", "f", 1, 101).allowed, true, "one request's worth back at 10/s");
    assert.equal(e.check("", "f", 1, 101).allowed, false, "not the whole burst");
    assert.equal(e.table.size, 2);
  });

  it("a hot key's block stays in its place, and is bounded and evicted like the others", () => {
    const e = enforcer({ maxBlocks: 2, fleet: true });
    assert(e.check("", "hot", 1, 0).allowed);
    const slot = e.table.get("", "hot")!;
    slot.hot = { rule: slot.rule }; // as the allocator marks a key it coordinates
    e.block("", "hot", 1_000, 0);
    assert.equal(e.table.get("", "hot"), slot, "the allocator's slot stays where it holds it");
    assert.equal(e.check("", "hot", 1, 1).allowed, false);
    e.block("", "x", 5_000, 1);
    e.block("", "y", 5_000, 2); // full: the hot key's block ends soonest
    assert.equal(e.counters.blocksEvicted, 1);
    assert.equal(e.blockedForMs("", "hot", 3), 0, "its block ended when evicted");
    assert.equal(e.check("", "hot", 1, 103).allowed, true, "its burst comes back at the rate");
    assert.deepEqual([e.check("", "x", 1, 3).allowed, e.check("", "y", 1, 3).allowed], [
      false,
      false,
    ]);
  });

  it("a blocked key in a fleet leaves the key hashes, and is hashed again when placed", () => {
    const e = enforcer({ fleet: true });
    assert(e.check("", "k", 1, 0).allowed);
    assert.equal(e.hashes!.size, 1);
    e.block("", "k", 1_000, 0);
    assert.equal(e.hashes!.size, 0, "peers' reports find no slot out of the table");
    assert.equal(e.check("", "k", 1, 2_000).allowed, true);
    assert.equal(e.hashes!.size, 1);
  });

  it("an ended block that left nothing owed is dropped without a check", () => {
    const e = enforcer();
    e.block("", "k", 1_000, 0);
    assert.equal(e.blockedKeys(500), 1);
    assert.equal(e.blockedKeys(1_100), 0, "ended");
    assert.equal(e.prune(2_000), 0, "no place of the table was taken");
    assert.equal(e.slotOf("", "k"), undefined, "the burst refilled: nothing to keep");
  });
});
