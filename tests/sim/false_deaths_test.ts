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
