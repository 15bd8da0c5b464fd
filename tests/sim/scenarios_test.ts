import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Cluster, replayCommand, SCENARIOS, summarize as summary } from "../../src/sim/mod.ts";
import { chaos } from "../../src/sim/scenarios/chaos.ts";
import { Report } from "../../src/sim/scenarios/report.ts";

describe("named scenarios", () => {
  for (const scenario of SCENARIOS) {
    it(`${scenario.name}: ${scenario.description}`, () => {
      const result = scenario.run(1);
      // On failure the message carries the seed and the command that replays it.
      assert.ok(result.ok, summary(result));
    });
  }
});

describe("chaos", () => {
  it("agrees again after every fault at once, for a few seeds", () => {
    for (const seed of [1, 2, 3, 4]) {
      const result = chaos(seed);
      assert.ok(result.ok, summary(result));
    }
  });

  it("replays a run exactly from its seed", () => {
    const trace = (seed: number) => {
      const lines: string[] = [];
      const result = chaos(seed, (line) => lines.push(line));
      return { lines, result };
    };
    assert.deepEqual(trace(9), trace(9));
    assert.notDeepEqual(trace(9).lines, trace(10).lines);
  });
});

describe("a failing run", () => {
  it("prints its seed and the command that replays it", () => {
    const report = new Report("partition", 1234);
    report.expect(false, "the sides never merged");
    const text = summary(report.done());
    assert.match(text, /FAIL partition seed=1234/);
    assert.ok(text.includes(replayCommand("partition", 1234)));
    assert.equal(replayCommand("partition", 1234), "deno task sim partition --seed 1234");
  });
});

describe("Cluster", () => {
  it("queues what a paused node hears and lets it catch up", () => {
    const cluster = new Cluster({ seed: 3, size: 3 });
    cluster.runUntil(2_000);
    const before = cluster.node(2)!.stats(cluster.nowMs);
    cluster.pause(2, 1_000);
    cluster.runFor(999);
    assert.deepEqual(cluster.node(2)!.stats(cluster.nowMs), before, "a paused node does nothing");
    cluster.runFor(2_000);
    assert.ok(cluster.converged());
  });

  it("refuses to restart a running node, naming it", () => {
    const cluster = new Cluster({ seed: 1, size: 2 });
    assert.throws(() => cluster.restart(1), /node 1/);
    assert.throws(() => cluster.node(5), RangeError);
    assert.throws(() => new Cluster({ seed: 1, clockDrift: 2 }), /clockDrift/);
  });

  it("counts every datagram and byte sent, two per node per period when healthy", () => {
    const cluster = new Cluster({ seed: 2, size: 5 });
    cluster.runUntil(5_000);
    cluster.resetTraffic();
    cluster.runFor(20_000);
    for (let i = 0; i < 5; i++) {
      const traffic = cluster.traffic(i);
      assert.equal(traffic.datagrams, 200, `node ${i}`);
      assert.ok(traffic.largestBytes <= 1_400 && traffic.bytes > 0);
    }
  });
});
