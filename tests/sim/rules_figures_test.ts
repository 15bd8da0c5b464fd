// Writing one row of docs/fleet-rules.md's figures keeps the others.
import { test } from "node:test";
import assert from "node:assert/strict";
import { figuresTable, mergeFigures, type RulesFigure } from "../../src/sim/figures/rules.ts";

function row(nodes: number, keyLimits: number, spreadMs: number): RulesFigure {
  const heapBytes = 130;
  return { nodes, keyLimits, spreadMs, spreadBytes: 2_048, learnMs: 250, learnBytes: 0, heapBytes };
}

test("a row measured on its own replaces its row in the table and leaves the others", () => {
  const old = figuresTable([row(5, 10, 350), row(50, 10_000, 400), row(5, 1_000_000, 29_650)]);
  const merged = mergeFigures(old, [row(50, 1_000_000, 31_000), row(5, 10, 300)]);
  assert.deepEqual(
    merged,
    figuresTable([
      row(5, 10, 300),
      row(5, 1_000_000, 29_650),
      row(50, 10_000, 400),
      row(50, 1_000_000, 31_000),
    ]),
  );
  assert.match(merged, /\| 50 \| 1,000,000 \| 31\.00 s \| 2 KiB \| 0\.25 s \| 0 KiB \| 130 B \|/);
});
