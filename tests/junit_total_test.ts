import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

test("npm test's total counts a file Bun skipped whole and left out of its report", () => {
  const dir = mkdtempSync(join(tmpdir(), "rateguard-junit-"));
  try {
    writeFileSync(
      join(dir, "bun.xml"),
      '<testsuites><testsuite name="tests/a_test.ts" file="tests/a_test.ts">' +
        '<testcase name="one"/><testcase name="two"><skipped/></testcase></testsuite></testsuites>',
    );
    writeFileSync(join(dir, "bun.rc"), "0\n");
    // b_test.ts is a skipped describe (PostgreSQL without a server): Bun reports nothing of it.
    writeFileSync(join(dir, "files.txt"), "tests/a_test.ts\ntests/b_test.ts\n");
    const run = spawnSync("node", ["scripts/junit-total.mjs", dir, "bun"], { encoding: "utf8" });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(run.stdout.trim().split("\n"), [
      "bun: 1 passed, 0 failed, 2 skipped",
      "1 passed, 0 failed, 2 skipped",
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a '>' in a test's name (XML leaves it unescaped in attributes) hides none of the cases after it", () => {
  const dir = mkdtempSync(join(tmpdir(), "rateguard-junit-"));
  try {
    // Node's reporter writes `--no-&lt;switch>`: the `>` is legal in an
    // attribute, and a reading that stops at it took every case up to the
    // next `</testcase>` for one case's body.
    writeFileSync(
      join(dir, "node.xml"),
      '<testsuites><testsuite name="t">' +
        '<testcase name="turns off, with --no-&lt;switch>, a switch" time="0.1" classname="test"/>' +
        '<testcase name="two" time="0.1" classname="test"/>' +
        '<testcase name="three" time="0.1" classname="test"/>' +
        '<testcase name="four" time="0.1" classname="test"><failure message="no">x</failure></testcase>' +
        "</testsuite></testsuites>",
    );
    writeFileSync(join(dir, "node.rc"), "1\n");
    const run = spawnSync("node", ["scripts/junit-total.mjs", dir, "node"], { encoding: "utf8" });
    assert.deepEqual(run.stdout.trim().split("\n"), [
      "node: 3 passed, 1 failed, 0 skipped",
      "3 passed, 1 failed, 0 skipped",
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
