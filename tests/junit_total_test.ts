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
