import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { paced, split } from "../../src/core/allocation/split.ts";

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

describe("paced", () => {
  const fair = 10;

  it("takes a share at or below the fair share at once, and one that falls", () => {
    const least = new Float64Array(8).fill(Infinity);
    assert.equal(paced(least, 0, 4, 5, fair), 5);
    assert.equal(paced(least, 1, 4, 50, fair), fair);
    least[2] = Infinity;
    assert.equal(paced(least, 2, 4, 3, fair), 3);
  });

  it("lets a share rise above the fair share only once the split has given it for the whole window", () => {
    const least = new Float64Array(8).fill(Infinity);
    least[0] = 8; // a round at 8 a second
    const applied: number[] = [];
    for (let round = 1; round <= 5; round++) {
      least[round % 8] = Infinity; // the allocator's start of a round
      applied.push(paced(least, round, 4, 30, fair));
    }
    // Rounds 1 to 3 still see round 0 within the last four; round 4 does not.
    assert.deepEqual(applied, [fair, fair, fair, 30, 30]);
  });

  it("takes the least the split gave above the fair share within the window", () => {
    const least = new Float64Array(8).fill(Infinity);
    least[0] = 20;
    least[1] = 15;
    assert.equal(paced(least, 2, 4, 40, fair), 15);
    // Rounds left at Infinity (the key was settling) do not hold it back.
    const fresh = new Float64Array(8).fill(Infinity);
    assert.equal(paced(fresh, 5, 4, 40, fair), 40);
  });
});
