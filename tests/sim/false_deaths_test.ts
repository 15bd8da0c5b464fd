import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { falseDeaths } from "../../src/sim/figures/membership_large.ts";

describe("a fleet of a hundred under 30% loss", () => {
  it("declares none of its living dead, or nearly none, in 30 s", () => {
    // Counted in (observer, member) pairs, of 9900, on this seed. With the
    // suspicion timeout fixed at 2 to 6 s and every failed probe counted
    // against the prober's health, 526 (526 to 1044 on seeds 1 to 5): the
    // scores rose to the top and slowed every node's probes ninefold, and
    // with them the news that refutes a suspicion. Timeouts grown by log10 N
    // alone, 34; probes through helpers alone no longer counted against the
    // prober when they fail, alone, 8; both, 0 on seeds 1 to 5.
    const pairs = falseDeaths(100, 0.3, { seed: 1, durationMs: 30_000 });
    assert.ok(pairs <= 5, `${pairs} (observer, member) pairs saw a false death`);
  });
});

describe("a fleet of 200 under 30% loss", () => {
  it("declares none of its living dead in 30 s", () => {
    // Of 39,800 pairs. 5 on seed 1 (3 and 1 on seeds 2 and 3; 15, 7 and 4
    // in a minute), each one node alone in holding a suspicion the rest had
    // seen refuted, until it ran out. Now a node probes such a suspect
    // itself before the suspicion runs out, a helper's answer carries the
    // target's record, and a member that knew better for a second tells a
    // sender of the stale suspicion: 0 on seeds 1 to 3, in a minute too.
    const pairs = falseDeaths(200, 0.3, { seed: 1, durationMs: 30_000 });
    assert.equal(pairs, 0, `${pairs} (observer, member) pairs saw a false death`);
  });
});
