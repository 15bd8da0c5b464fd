/**
 * Blocks made on one node of a fleet sharing rules: every node denies the
 * key within a few periods, a late learner blocks only for what is left,
 * every node admits it again once the block ends, and an ended block
 * leaves nothing behind after the tombstone lifetime.
 */

import { test } from "node:test";
import assert from "node:assert/strict";
import { TOMBSTONE_MS } from "../../src/core/rules_sync/mod.ts";
import { RulesFleet } from "../../src/sim/faces/rules_fleet.ts";
import { GUARD_BOUNDS } from "../../src/core/options.ts";

const SETTLE_MS = 10_000;

function started(seed: number, size: number): RulesFleet {
  const fleet = new RulesFleet({ seed, size });
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined, "the fleet formed");
  fleet.runUntil(fleet.nowMs + 5_000);
  return fleet;
}

/** Whether each running node admits a check of `key` now (the check takes one request). */
function admits(fleet: RulesFleet, key: string): boolean[] {
  return Array.from({ length: fleet.size }, (_, i) => fleet.check(i, key).allowed);
}

test("a block made on one node is enforced by every node, then lifted by its end", () => {
  const fleet = started(31, 5);
  assert.deepEqual(admits(fleet, "ip:203.0.113.7"), Array(5).fill(true));
  const blockMs = 30_000;
  const atMs = fleet.nowMs;
  assert.equal(fleet.block(2, "ip:203.0.113.7", blockMs), true);
  fleet.runUntil(atMs + 1_000); // five protocol periods
  assert.deepEqual(admits(fleet, "ip:203.0.113.7"), Array(5).fill(false), "denied everywhere");
  for (let i = 0; i < 5; i++) {
    const wait = fleet.check(i, "ip:203.0.113.7").retryAfterMs;
    assert.ok(wait > blockMs - 2_000 && wait <= blockMs, `node ${i} waits ${wait} ms`);
  }
  // A newcomer learns the block, and blocks only for what is left of it.
  fleet.runUntil(atMs + 10_000);
  const late = fleet.add({ seeds: [0] });
  fleet.runUntil(atMs + 15_000);
  const lateWait = fleet.check(late, "ip:203.0.113.7").retryAfterMs;
  // Its wall clock may differ from node 2's by the ms the simulator skews clocks.
  assert.ok(lateWait > 13_000 && lateWait <= 15_100, `the newcomer waits ${lateWait} ms`);
  fleet.runUntil(atMs + blockMs + 1_000);
  assert.deepEqual(admits(fleet, "ip:203.0.113.7"), Array(6).fill(true), "admitted once it ends");
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
  for (let i = 0; i < 6; i++) {
    assert.equal(fleet.stats(i)!.rules.live, 0, `node ${i}: an ended block is no rule`);
  }
});

test("an ended block leaves nothing behind after the tombstone lifetime", () => {
  const fleet = started(34, 3);
  fleet.block(1, "k", 2_000);
  fleet.runUntil(fleet.nowMs + 3_000);
  for (let i = 0; i < 3; i++) assert.equal(fleet.stats(i)!.rules.removed, 1, `node ${i} holds it`);
  fleet.runUntil(fleet.nowMs + TOMBSTONE_MS);
  for (let i = 0; i < 3; i++) assert.equal(fleet.stats(i)!.rules.removed, 0, `node ${i} residue`);
  assert.deepEqual(admits(fleet, "k"), [true, true, true]);
});

test("a shorter block leaves a longer one; a reset lifts the block on every node", () => {
  const fleet = started(32, 4);
  fleet.block(0, "k", 60_000);
  fleet.runUntil(fleet.nowMs + 1_000);
  fleet.block(3, "k", 5_000); // shorter: the minute stands
  fleet.runUntil(fleet.nowMs + 10_000);
  assert.deepEqual(admits(fleet, "k"), Array(4).fill(false), "the longer block stands");
  fleet.reset(1, "k");
  fleet.runUntil(fleet.nowMs + 1_000);
  assert.deepEqual(admits(fleet, "k"), Array(4).fill(true), "lifted everywhere");
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined);
});

test("a block on a fleet without fleet rules stays on its node", () => {
  const fleet = new RulesFleet({ seed: 33, size: 3, fleetRules: false });
  fleet.runUntil(10_000);
  fleet.block(0, "k", 60_000);
  fleet.runUntil(fleet.nowMs + 5_000);
  assert.deepEqual(admits(fleet, "k"), [false, true, true]);
});

test("8,192 blocks made on one node leave every node's new users admitted", () => {
  const fleet = started(35, 3);
  const count = 8_192, blockMs = 15 * 60_000;
  // Each a millisecond longer than the one before: the newest is held everywhere.
  for (let i = 0; i < count; i++) fleet.block(0, `ip:${i}`, blockMs + i);
  assert.notEqual(fleet.runUntilConverged(SETTLE_MS), undefined, "every node holds the blocks");
  for (let node = 0; node < 3; node++) {
    let admitted = 0;
    for (let u = 0; u < 200; u++) if (fleet.check(node, `user:${node}:${u}`).allowed) admitted++;
    assert.equal(admitted, 200, `node ${node} admits every new user`);
    const s = fleet.stats(node)!;
    assert.equal(s.overflowed, 0, `node ${node}: no new user on the overflow allowance`);
    assert.equal(s.blockedKeys, GUARD_BOUNDS.maxBlocks.default, `node ${node} holds its bound`);
    assert.equal(s.blocksEvicted, count - GUARD_BOUNDS.maxBlocks.default, `node ${node}`);
    assert.equal(fleet.check(node, `ip:${count - 1}`).allowed, false, `node ${node} still blocks`);
  }
});
