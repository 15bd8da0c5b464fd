/**
 * A bulk change larger than gossip carries quickly (more than the 1,024
 * recent changes kept for gossip, or more than a few periods of it) must
 * still flow: its member tells the others it is ahead, and they pull its
 * table at once, rather than after five periods of disagreeing digests.
 */

import { test } from "node:test";
import assert from "node:assert/strict";
import { Limit } from "../../src/core/limit.ts";
import { RulesFleet } from "../../src/sim/faces/rules_fleet.ts";

/** Virtual ms from `count` key limits set at once on node 0 of a settled fleet of five until all agree. */
function spreadMs(count: number): number | undefined {
  const fleet = new RulesFleet({ seed: 18, size: 5, maxKeyLimits: 10_000 });
  assert.notEqual(fleet.runUntilConverged(10_000), undefined, "the fleet formed");
  fleet.runUntil(fleet.nowMs + 5_000);
  for (let i = 0; i < count; i++) fleet.setKeyLimit(0, "", `user:${i}`, Limit.perSecond(1 + i));
  const ms = fleet.runUntilConverged(60_000, 10);
  for (let i = 0; i < 5; i++) assert.equal(fleet.book(i).keyLimits().length, count, `node ${i}`);
  return ms;
}

test("5,000 key limits set at once on one node reach every node within two periods", () => {
  const ms = spreadMs(5_000);
  // Five periods of disagreement alone are 1,000 ms at the 200 ms period.
  assert.ok(ms !== undefined && ms <= 400, `every node held them after ${ms} ms`);
});

test("so do 500, which fit in gossip's outbox but would take it many periods to send", () => {
  const ms = spreadMs(500);
  assert.ok(ms !== undefined && ms <= 400, `every node held them after ${ms} ms`);
});

test("once every digest agrees after a bulk change, no member pulls a table again", () => {
  // Members pulling the change hear each other partway; what they heard then must not
  // start a transfer once all agree, nor keep one going.
  const nodes = 30, count = 2_000;
  const fleet = new RulesFleet({ seed: 17, size: nodes, maxKeyLimits: count, countPages: true });
  assert.notEqual(fleet.runUntilConverged(10_000), undefined, "the fleet formed");
  fleet.runUntil(fleet.nowMs + 5_000);
  for (let i = 0; i < count; i++) fleet.setKeyLimit(0, "", `user:${i}`, Limit.perSecond(1 + i));
  assert.notEqual(fleet.runUntilConverged(60_000), undefined, "every member holds the change");
  const spread = fleet.pages();
  const transfers = () =>
    Array.from({ length: nodes }, (_, i) => fleet.stats(i)!.rules.transfers).reduce((a, b) =>
      a + b
    );
  const before = transfers();
  fleet.resetPages();
  fleet.runUntil(fleet.nowMs + 30_000);
  const after = fleet.pages();
  assert.equal(fleet.converged(), true);
  assert.equal(
    transfers() - before,
    0,
    `transfers in the 30 s after all agreed (pages: ${after.datagrams}, ${after.bytes} bytes; the spread ${spread.datagrams}, ${spread.bytes})`,
  );
  // A pull under way as the last member caught up may take one more answer (four pages)
  // before its puller hears the agreement: a page or so a member at most, nothing like a table.
  assert.ok(
    after.bytes <= spread.bytes / nodes / 4,
    `${after.datagrams} pages, ${after.bytes} bytes in the 30 s after all agreed; the spread took ${spread.datagrams}, ${spread.bytes}`,
  );
});
