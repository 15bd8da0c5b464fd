/**
 * Blocks live in a bounded set of their own and never take the key-table
 * places that check traffic needs: however many keys are blocked, new
 * users are admitted as on a guard with no block at all, and a full set
 * makes room by ending the block nearest its end, counted in the stats.
 */

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Guard } from "../../mod.ts";
import { GUARD_BOUNDS } from "../../src/core/options.ts";

const BLOCK_MS = 15 * 60_000;

/** The default guard of the README (`limit(100)`, 8,192 places) on a clock the test moves. */
async function defaultGuard() {
  const time = { nowMs: 1_000 };
  const guard = await Guard.builder().limit(100).clock(() => time.nowMs).spawn();
  return { guard, time };
}

/** How many of `count` users never seen before are admitted by one check each. */
function newUsersAdmitted(guard: Guard, tag: string, count = 200): number {
  let admitted = 0;
  for (let i = 0; i < count; i++) if (guard.check(`user:${tag}:${i}`).allowed) admitted++;
  return admitted;
}

describe("blocks are bounded apart from the key table", () => {
  for (const count of [8_192, 100_000]) {
    it(`${count.toLocaleString("en")} blocks of distinct keys leave every new user admitted`, async () => {
      const { guard, time } = await defaultGuard();
      // Each block a millisecond longer than the one before: the nearest to
      // its end is always the oldest, so which ones a full set holds is known.
      for (let i = 0; i < count; i++) assert.equal(guard.block(`ip:${i}`, BLOCK_MS + i), true);
      time.nowMs += 1_000;
      assert.equal(newUsersAdmitted(guard, "a"), 200, "the first 200 new users");
      assert.equal(newUsersAdmitted(guard, "b"), 200, "the next 200");
      assert.equal(guard.stats().overflowed, 0, "no new user fell on the overflow allowance");
      const max = GUARD_BOUNDS.maxBlocks.default;
      const s = guard.stats();
      assert.equal(s.blockedKeys, max);
      assert.equal(s.blocksEvicted, count - max);
      assert.equal(guard.check(`ip:${count - 1}`).allowed, false, "the newest block still denies");
      assert.equal(guard.check(`ip:${count - max}`).allowed, false, "so does the oldest one held");
      assert.equal(guard.check("ip:0").allowed, true, "the first, evicted, is admitted");
    });
  }

  it("block() of one more key when full succeeds, evicting the block nearest its end", async () => {
    const { guard, time } = await defaultGuard();
    const max = GUARD_BOUNDS.maxBlocks.default;
    for (let i = 0; i < max; i++) guard.block(`ip:${i}`, BLOCK_MS + i);
    assert.deepEqual([guard.stats().blockedKeys, guard.stats().blocksEvicted], [max, 0]);
    time.nowMs += 1_000;
    assert.equal(guard.block("ip:one-more", 60_000), true);
    assert.equal(guard.check("ip:one-more").allowed, false, "the new block holds");
    assert.equal(guard.stats().blocksEvicted, 1, "the eviction is counted");
    assert.equal(guard.stats().blockedKeys, max);
    assert.equal(guard.keyStats("ip:0")?.blockedForMs ?? 0, 0, "the nearest to its end went");
    assert.equal(guard.check("ip:0").allowed, true);
    assert.equal(guard.check("ip:1").allowed, false, "the next nearest stays");
    assert.ok(guard.keyStats("ip:1")!.blockedForMs > BLOCK_MS - 2_000);
  });

  it("a blocked key that had its place gives it up, and gets one back after the block", async () => {
    const { guard, time } = await defaultGuard();
    assert(guard.check("ip:7").allowed);
    assert.equal(guard.stats().trackedKeys, 1);
    guard.block("ip:7", 5_000);
    assert.equal(guard.stats().trackedKeys, 0, "the block holds no place of the key table");
    assert.equal(guard.check("ip:7").allowed, false);
    assert.equal(guard.stats().trackedKeys, 0, "nor does a check of the blocked key");
    time.nowMs += 5_000 + 10; // one request's worth at 100/s
    assert(guard.check("ip:7").allowed, "the burst comes back at the rate once the block ends");
    assert.equal(guard.check("ip:7").allowed, false, "not the whole burst at once");
    assert.equal(guard.stats().trackedKeys, 1);
    assert.equal(guard.stats().blockedKeys, 0);
  });

  it("maxBlocks bounds the set, from 1 to 65,536", async () => {
    assert.throws(() => Guard.builder().maxBlocks(0), { name: "RangeError", message: /maxBlocks/ });
    assert.throws(() => Guard.builder().maxBlocks(65_537), RangeError);
    const time = { nowMs: 0 };
    const guard = await Guard.builder().limit(10).maxBlocks(2).clock(() => time.nowMs).spawn();
    for (const [key, ms] of [["a", 3_000], ["b", 1_000], ["c", 2_000]] as const) {
      assert.equal(guard.block(key, ms), true);
    }
    assert.deepEqual(
      ["a", "b", "c"].map((k) => guard.check(k).allowed),
      [false, true, false],
      "b, nearest its end, made room for c",
    );
    assert.deepEqual([guard.stats().blockedKeys, guard.stats().blocksEvicted], [2, 1]);
  });
});
