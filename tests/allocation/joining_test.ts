import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Fleet, KEY } from "../../src/sim/faces/fleet.ts";
import type { SeedLookup } from "../../src/sim/driver/names.ts";
import { Limit } from "../../src/core/limit.ts";
import { Enforcer } from "../../src/core/enforcer.ts";
import { FleetNode } from "../../src/core/fleet_node.ts";
import { PUBLIC_HASH_KEY } from "../../src/core/hash.ts";
import { PartitionPolicy } from "../../src/core/partition.ts";
import { LimitBook } from "../../src/core/rules.ts";
import { Address } from "../../src/proto/mod.ts";

const R = 100;
const LIMIT = Limit.perSecond(R).burst(50);
const BETA = 0.05;

/**
 * The most a node held at the floor R·β/N (N = 1 while joining) admits of a
 * key over `ms` from its start: the one request a lean start leaves of the
 * burst, then the floor's rate.
 */
const floorBound = (ms: number) => 1 + Math.ceil((R * BETA * ms) / 1_000);

/** A fleet of two, settled, and a third member whose seed name is looked up as `lookup`. */
function joinWith(lookup: SeedLookup) {
  const fleet = new Fleet({ seed: 4, size: 2, limit: LIMIT });
  fleet.runUntil(5_000);
  const fresh = fleet.add({ seedLookup: lookup });
  fleet.setDemand(fresh, 1_000);
  return { fleet, fresh };
}

describe("a member that has not reached a peer is held", () => {
  const cases: [string, SeedLookup][] = [
    ["resolve to nothing", { answer: "nothing" }],
    ["fail", { answer: "fail" }],
    ["answer after 3 s", { delayMs: 3_000 }],
  ];
  for (const [what, lookup] of cases) {
    it(`whose seed lookups ${what}: at most the floor for 2 s, stats say joining`, () => {
      const { fleet, fresh } = joinWith(lookup);
      fleet.runUntil(7_000);
      const admitted = fleet.take(fresh).admitted;
      assert.ok(admitted <= floorBound(2_000), `admitted ${admitted} > ${floorBound(2_000)}`);
      const s = fleet.stats(fresh)!;
      assert.deepEqual([s.joining, s.held, s.clusterSize], [true, true, 1]);
    });
  }

  it("whose seed resolves but does not answer: held at the floor, joining", () => {
    const fleet = new Fleet({ seed: 4, size: 2, limit: LIMIT });
    fleet.crash(1); // node 0's seed, gone before anything ran
    fleet.setDemand(0, 1_000);
    fleet.runUntil(2_000);
    const admitted = fleet.take(0).admitted;
    assert.ok(admitted <= floorBound(2_000), `admitted ${admitted} > ${floorBound(2_000)}`);
    assert.deepEqual([fleet.stats(0)!.joining, fleet.stats(0)!.held], [true, true]);
  });

  it("whose lookups fail for 2 s, then answer: held until it joins, then shares", () => {
    const { fleet, fresh } = joinWith({ answer: "fail", untilMs: 7_000 });
    fleet.runUntil(7_000);
    assert.ok(fleet.take(fresh).admitted <= floorBound(2_000));
    assert.equal(fleet.stats(fresh)!.joining, true);
    // Failed lookups are retried within a few seconds (1 s, 2 s, 4 s...).
    fleet.runUntil(12_000);
    const s = fleet.stats(fresh)!;
    assert.deepEqual([s.joining, s.held, s.clusterSize], [false, false, 3]);
    fleet.take(fresh);
    fleet.runUntil(17_000);
    const perSec = fleet.take(fresh).admitted / 5;
    assert.ok(perSec > 0.9 * R, `alone in its demand, it takes nearly all of R: ${perSec}/s`);
  });

  it("joining a live fleet: held in its first 100 ms, whatever its lookup's delay", () => {
    for (const delayMs of [1, 50, 150]) {
      const { fleet, fresh } = joinWith({ delayMs });
      fleet.runUntil(5_100);
      const admitted = fleet.take(fresh).admitted;
      assert.ok(admitted <= floorBound(100), `delay ${delayMs} ms: admitted ${admitted}`);
      assert.equal(fleet.stats(fresh)!.held, true);
    }
  });

  it("a member whose peers all went away is not joining again: its partition policy decides", () => {
    const fleet = new Fleet({ seed: 4, size: 2, limit: LIMIT });
    fleet.runUntil(5_000);
    fleet.leave(1);
    fleet.runUntil(6_000);
    const s = fleet.stats(0)!;
    assert.deepEqual([s.clusterSize, s.joining, s.held], [1, false, false]);
    assert.equal(fleet.share(0, KEY), R * 0.5, "the cold share of a fleet of one");
  });
});

describe("a fleet node before its first timeout", () => {
  it("is held: checks made before the node has run at all get the floor, lean", () => {
    const book = new LimitBook(LIMIT, { maxClasses: 4, maxKeyLimits: 4 });
    const enforcer = new Enforcer(book, {
      capacity: 64,
      overflowScale: 0.5,
      fleet: { hashKey: PUBLIC_HASH_KEY },
    });
    const node = new FleetNode({
      address: Address.parse("10.0.0.9:7946"),
      book,
      enforcer,
      policy: PartitionPolicy.holdDown(),
      hotKeys: 64,
      seeds: ["rateguard.svc:7946"],
      membership: { seed: 9 },
    });
    let admitted = 0;
    for (let i = 0; i < 1_000; i++) if (node.check("", "k", 1, 0).allowed) admitted++;
    assert.equal(admitted, 1);
    assert.equal(node.share("", "other"), R * BETA);
    node.handleTimeout(0);
    assert.deepEqual([node.stats(0).joining, node.stats(0).held], [true, true]);
  });
});
