import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Cluster } from "../../src/sim/mod.ts";

describe("a large fleet once formed", () => {
  it("probes members it has not proven through one helper first: not three datagrams' worth each", () => {
    // At 200 nodes a round of probes takes 40 s, so for most of the first
    // one the member probed has not proven itself to the prober, and is
    // probed through helpers. Asking three at once cost about 11 datagrams
    // a node a period; the seed alone first, the others only on silence, 6.6.
    // A target that challenges the member a helper's ping names, besides the
    // ping its relayed ack starts, made it 8.9; one challenge at a time, 6.8.
    const cluster = new Cluster({ seed: 3, size: 200 });
    cluster.runUntil(8_000);
    cluster.resetTraffic();
    cluster.runFor(2_000);
    let datagrams = 0;
    for (let i = 0; i < cluster.size; i++) datagrams += cluster.traffic(i).datagrams;
    const perNodePerPeriod = datagrams / cluster.size / (2_000 / 200);
    assert.ok(perNodePerPeriod < 8.5, `${perNodePerPeriod.toFixed(2)} datagrams a node a period`);
    assert.ok(cluster.converged());
  });
});
