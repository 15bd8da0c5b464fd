// The large figures' writer keeps the rows of sizes it did not run, each
// cell under the column its block named, and says which kept row is stale
// rather than dropping it: `--sizes 200 --write` once dropped the 1000 row
// because its block was written before "Newcomer knows all".
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  keptRows,
  LARGE_MARKERS,
  largeTable,
  NOT_MEASURED,
} from "../../src/sim/figures/membership_large.ts";

const OLD_BLOCK = [
  `${LARGE_MARKERS.begin} (generated) -->`,
  "",
  "| Healthy cluster | Datagrams per node per period | Bytes per node per period | Crash known by all: mean, slowest | False deaths in a minute, 10% loss | 30% loss |",
  "| --- | --- | --- | --- | --- | --- |",
  "| 200 nodes | 3.01 | 233 | 5.32 s, 5.35 s (3 seeds) | 0 | 3 |",
  "| 1000 nodes | 6.54 | 466 | 6.96 s, 6.96 s (3 seeds) | 33 | 22906 |",
  "",
  LARGE_MARKERS.end,
].join("\n");

const MEASURED_200 = ["200 nodes", "2.00", "150", "4.00 s, 4.10 s (3 seeds)", "0.80 s", "0", "2"];

const cellsOf = (markdown: string, size: number) =>
  markdown.split("\n").find((line) => line.startsWith(`| ${size} nodes`))?.split("|").slice(1, -1)
    .map((cell) => cell.trim());

describe("large figures: the rows a run leaves", () => {
  it("keeps a row written before a column was added, marked, and says so", () => {
    const warned: string[] = [];
    const markdown = largeTable(new Map([[200, MEASURED_200]]), OLD_BLOCK, (l) => warned.push(l));
    assert.deepEqual(cellsOf(markdown, 200), MEASURED_200);
    assert.deepEqual(cellsOf(markdown, 1000), [
      "1000 nodes",
      "6.54",
      "466",
      "6.96 s, 6.96 s (3 seeds)",
      NOT_MEASURED,
      "33",
      "22906",
    ]);
    assert.equal(warned.length, 1, warned.join("\n"));
    assert.match(warned[0], /1000 nodes row is stale.*Newcomer knows all.*--sizes 1000/);
  });

  it("keeps a row that matches the header as it was, silently", () => {
    const warned: string[] = [];
    const current = largeTable(new Map([[200, MEASURED_200]]), "", () => {});
    const block = `${LARGE_MARKERS.begin} -->\n\n${current}\n\n${LARGE_MARKERS.end}`;
    const again = largeTable(new Map(), block, (l) => warned.push(l));
    assert.equal(again, current);
    assert.deepEqual(warned, []);
  });

  it("marks a row whose cells do not match its header, naming it", () => {
    const warned: string[] = [];
    const cut = OLD_BLOCK.replace("| 33 | 22906 |", "| 33 |");
    const row = keptRows(cut, new Set([200]), (l) => warned.push(l)).get(1000);
    assert.deepEqual(row?.slice(-2), ["33", NOT_MEASURED]);
    assert.match(warned.join("\n"), /1000 nodes row has 5 cells under 6 columns/);
  });

  it("reads only its own block of the document", () => {
    const document = readFileSync("docs/membership.md", "utf8");
    const rows = keptRows(document, new Set(), () => {});
    assert.deepEqual([...rows.keys()], [200, 1000], "the small figures' rows are not the large's");
    assert.equal(rows.get(1000)?.[0], "1000 nodes");
  });
});
