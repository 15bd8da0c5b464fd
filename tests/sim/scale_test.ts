import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Cluster } from "../../src/sim/mod.ts";

describe("a large fleet forming at once", () => {
  it("suspects nobody on a faultless network: its one seed helps every probe it is asked to", () => {
    // Every node joins through node 0, and probes of members it has only
    // heard of ask node 0 first; node 0 must run all those probes for them,
    // or their askers count the silence against live members.
    const cluster = new Cluster({ seed: 1, size: 200 });
    let suspicions = 0;
    cluster.onChange(({ change }) => {
      if (change.member.state === "suspect" || change.member.state === "dead") suspicions++;
    });
    cluster.runUntil(9_000);
    assert.equal(suspicions, 0);
    assert.ok(cluster.converged());
  });
});
