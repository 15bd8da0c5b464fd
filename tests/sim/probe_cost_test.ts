import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Cluster } from "../../src/sim/mod.ts";

/** Datagrams a node sends a period, averaged over the nodes, from `fromMs` for `forMs`. */
function cost(cluster: Cluster, fromMs: number, forMs: number): number {
  cluster.runUntil(fromMs);
  cluster.resetTraffic();
  cluster.runFor(forMs);
  let datagrams = 0;
  for (let i = 0; i < cluster.size; i++) datagrams += cluster.traffic(i).datagrams;
  return datagrams / cluster.size / (forMs / 200);
}

describe("a large fleet once formed", () => {
  it("probes members it has not proven through one helper first: not three datagrams' worth each", () => {
    // At 200 nodes a round of probes takes 40 s, so for most of the first
    // one the member probed has not proven itself to the prober, and is
    // probed through helpers. Asking three at once cost about 11 datagrams
    // a node a period; the seed alone first, the others only on silence, 6.6.
    // A target that challenges the member a helper's ping names, besides the
    // ping its relayed ack starts, made it 8.9; one challenge at a time, 6.8.
    const cluster = new Cluster({ seed: 3, size: 200 });
    const perNodePerPeriod = cost(cluster, 8_000, 2_000);
    assert.ok(perNodePerPeriod < 8.5, `${perNodePerPeriod.toFixed(2)} datagrams a node a period`);
    assert.ok(cluster.converged());
  });
});
