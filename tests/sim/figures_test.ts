import { it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { figuresMarkdown, withFigures } from "../../src/sim/figures/membership.ts";

it("docs/membership.md shows the figures the simulator measures today", () => {
  const document = readFileSync("docs/membership.md", "utf8");
  const figures = figuresMarkdown();
  assert.match(figures, /\| 50 nodes +\| 2\.00 /, "two datagrams per node per period at 50 nodes");
  assert.equal(
    withFigures(document, figures),
    document,
    "out of date: run deno task sim figures --write docs/membership.md",
  );
});

it("withFigures refuses a document without markers", () => {
  assert.throws(() => withFigures("# nothing here", "| a |"), RangeError);
});
