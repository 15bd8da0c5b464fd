// Rooms of a size to live in: DESIGN.md asks for files of at most 400
// lines. A file of src over that holds one idea too big to cut (a table, one
// state machine, the public docs of one class) and says so at its top, in a
// paragraph of its module doc that starts `Why this file is over 400
// lines:`. A file that shrank back under the line drops the paragraph, so
// that no reason outlives its file's size.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { sources } from "./sources.ts";

const MOST_LINES = 400;
const REASON = "Why this file is over 400 lines:";

function lineCount(text: string): number {
  const lines = text.split("\n").length;
  return text.endsWith("\n") ? lines - 1 : lines;
}

/** The file's leading comments, up to its first line of code. */
function moduleDoc(text: string): string {
  const doc: string[] = [];
  for (const line of text.split("\n")) {
    const t = line.trim();
    if (t === "" || t.startsWith("/*") || t.startsWith("*") || t.startsWith("//")) doc.push(line);
    else break;
  }
  return doc.join("\n");
}

/** A reason is a sentence or more after the words that open it, not the words alone. */
function hasReason(doc: string): boolean {
  const at = doc.indexOf(REASON);
  if (at < 0) return false;
  const rest = doc.slice(at + REASON.length).replace(/[\s*/]+/g, " ").trim();
  return rest.split(" ").length >= 8;
}

test("every file of src over 400 lines says at its top why", () => {
  const unexplained: string[] = [];
  const stale: string[] = [];
  for (const file of sources("src").sort()) {
    const text = readFileSync(file, "utf8");
    const lines = lineCount(text);
    const explained = hasReason(moduleDoc(text));
    if (lines > MOST_LINES && !explained) unexplained.push(`${file} (${lines} lines)`);
    if (lines <= MOST_LINES && text.includes(REASON)) stale.push(`${file} (${lines} lines)`);
  }
  assert.deepEqual(
    unexplained,
    [],
    `over ${MOST_LINES} lines with no "${REASON}" paragraph in the module doc`,
  );
  assert.deepEqual(stale, [], `at most ${MOST_LINES} lines, yet still saying "${REASON}"`);
});

test("the reason is read from the module doc alone", () => {
  const code =
    "/**\n * A module.\n *\n * Why this file is over 400 lines: one table of every flag, read in one place.\n */\nexport const x = 1;\n";
  assert.equal(hasReason(moduleDoc(code)), true);
  const below =
    "export const x = 1;\n// Why this file is over 400 lines: one table of every flag, read in one place.\n";
  assert.equal(hasReason(moduleDoc(below)), false);
  assert.equal(
    hasReason(moduleDoc("/** Why this file is over 400 lines: */\nexport {};\n")),
    false,
  );
  assert.equal(lineCount("a\nb\n"), 2);
  assert.equal(lineCount("a\nb"), 2);
});
