import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { split } from "../../src/core/allocation/split.ts";

const R = 1_000, BETA = 0.05;

/** Every node's split of R, each seeing the same demands. */
function shares(demands: number[]): number[] {
  const n = demands.length, total = demands.reduce((a, b) => a + b, 0);
  return demands.map((d) => split(R * (1 - BETA), (R * BETA) / n, d, total, n));
}

describe("split", () => {
  it("adds up to R whether the key is offered more or less than it", () => {
    for (
      const demands of [[1200, 150, 150, 150, 150], [100, 10, 10, 10, 10], [0, 0, 0], [950, 0]]
    ) {
      const sum = shares(demands).reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(sum - R) < 1e-9, `${demands}: ${sum}`);
    }
  });

  it("goes by demand where demand takes the whole limit", () => {
    const [a, b] = shares([1200, 300]);
    assert.ok(Math.abs((a - 25) / (b - 25) - 4) < 1e-9, `${a} ${b}`);
  });

  it("gives each its demand and an even part of the rest where demand does not", () => {
    // Floors 10, 810 left over demand: 162 each.
    const [a, b] = shares([100, 10, 10, 10, 10]);
    assert.equal(a, 10 + 100 + 162);
    assert.equal(b, 10 + 10 + 162);
  });
});
