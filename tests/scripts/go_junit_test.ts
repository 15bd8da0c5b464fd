// scripts/go-junit.mjs turns `go test -json` into the JUnit report that
// scripts/junit-total.mjs counts: leaf tests only, an unfinished test a
// failure, and a report of skips alone no failure.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const pkg = "example.com/m";
const events = [
  { Action: "run", Test: "TestA" },
  { Action: "output", Test: "TestA", Output: "=== RUN   TestA\n" },
  { Action: "pass", Test: "TestA", Elapsed: 0.5 },
  { Action: "run", Test: "TestTable" },
  { Action: "run", Test: "TestTable/one" },
  { Action: "run", Test: "TestTable/two" },
  { Action: "output", Test: "TestTable/two", Output: "    x_test.go:9: want <1> & got 2\n" },
  { Action: "pass", Test: "TestTable/one", Elapsed: 0 },
  { Action: "fail", Test: "TestTable/two", Elapsed: 0 },
  { Action: "fail", Test: "TestTable", Elapsed: 0 },
  { Action: "run", Test: "TestSkipped" },
  { Action: "output", Test: "TestSkipped", Output: "    no server\n" },
  { Action: "skip", Test: "TestSkipped", Elapsed: 0 },
  { Action: "run", Test: "TestHangs" },
  { Action: "output", Output: "panic: test timed out after 2m0s\n" },
  { Action: "fail", Elapsed: 120 },
].map((e) => JSON.stringify({ Package: pkg, ...e })).join("\n") + "\n# a plain line\n";

function convert(dir: string, input: string, name: string) {
  const xml = join(dir, `${name}.xml`);
  const res = spawnSync("node", ["scripts/go-junit.mjs", xml, name], { input, encoding: "utf8" });
  assert.equal(res.status, 0, res.stderr);
  return { xml: readFileSync(xml, "utf8"), stdout: res.stdout };
}

function total(dir: string, names: string[]) {
  return spawnSync("node", ["scripts/junit-total.mjs", dir, ...names], { encoding: "utf8" });
}

test("go test -json becomes leaf cases, an unfinished test failing", () => {
  const dir = mkdtempSync(join(tmpdir(), "rateguard-go-junit-"));
  try {
    const { xml, stdout } = convert(dir, events, "go-x");
    const names = [...xml.matchAll(/<testcase [^>]*name="([^"]*)"/g)].map((m) => m[1]);
    assert.deepEqual(names, [
      "TestA",
      "TestTable/one",
      "TestTable/two",
      "TestSkipped",
      "TestHangs",
    ]);
    assert.match(
      xml,
      /name="TestTable\/two"[^>]*><failure message="failed">[^<]*want &lt;1&gt; &amp; got 2/,
    );
    assert.match(xml, /name="TestHangs"[^>]*><failure message="did not finish">/);
    assert.match(xml, /name="TestSkipped"[^>]*><skipped message="no server"\/>/);
    assert.match(stdout, /panic: test timed out/, "the tests' output goes to the log");
    assert.match(stdout, /# a plain line/);
    assert.match(stdout, /go-x: 2 passed, 2 failed, 1 skipped\n$/);
    writeFileSync(join(dir, "go-x.rc"), "1\n");
    const res = total(dir, ["go-x"]);
    assert.equal(res.status, 1);
    assert.match(res.stdout, /^2 passed, 2 failed, 1 skipped$/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a report of skips alone is no failure; no report at all is one", () => {
  const dir = mkdtempSync(join(tmpdir(), "rateguard-go-junit-"));
  try {
    const skipped = [
      { Action: "run", Test: "TestX" },
      { Action: "skip", Test: "TestX", Elapsed: 0 },
    ].map((e) => JSON.stringify({ Package: pkg, ...e })).join("\n");
    convert(dir, skipped, "go-s");
    writeFileSync(join(dir, "go-s.rc"), "0\n");
    let res = total(dir, ["go-s"]);
    assert.equal(res.status, 0, res.stdout);
    assert.match(res.stdout, /^0 passed, 0 failed, 1 skipped$/m);
    writeFileSync(join(dir, "go-none.rc"), "0\n");
    res = total(dir, ["go-none"]);
    assert.equal(res.status, 1);
    assert.match(res.stdout, /^0 passed, 1 failed, 0 skipped$/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
