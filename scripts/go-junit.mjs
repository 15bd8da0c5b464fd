// Turns `go test -json` (on stdin) into a JUnit report for
// scripts/junit-total.mjs, and echoes the tests' own output to stdout for
// the log. Only leaf tests are cases: a test with subtests passes or fails
// through them, so it is not counted itself. A test that started and never
// ended (a panic, a timeout) is a failure.
//
//   go test -json ./... | node scripts/go-junit.mjs out.xml "suite name"
import { writeFileSync } from "node:fs";
import { createInterface } from "node:readline";

const [outPath, suite = "go test"] = process.argv.slice(2);
if (!outPath) {
  console.error("usage: go test -json ./... | node scripts/go-junit.mjs out.xml [suite]");
  process.exit(2);
}

/** Test name → { pkg, action, elapsed, output }. */
const tests = new Map();
for await (const line of createInterface({ input: process.stdin })) {
  let event;
  try {
    event = JSON.parse(line);
  } catch {
    console.log(line); // build errors and the like come as plain text
    continue;
  }
  if (event.Output !== undefined) process.stdout.write(event.Output);
  if (!event.Test) continue;
  const id = `${event.Package} ${event.Test}`;
  const test = tests.get(id) ??
    { pkg: event.Package, name: event.Test, action: "run", elapsed: 0, output: "" };
  tests.set(id, test);
  if (event.Action === "output") test.output += event.Output;
  else if (["pass", "fail", "skip"].includes(event.Action)) {
    test.action = event.Action;
    test.elapsed = event.Elapsed ?? 0;
  }
}

const all = [...tests.values()];
const leaves = all.filter((t) =>
  !all.some((u) => u.pkg === t.pkg && u.name.startsWith(`${t.name}/`))
);
const failures = leaves.filter((t) => t.action === "fail" || t.action === "run").length;
const skips = leaves.filter((t) => t.action === "skip").length;
const cases = leaves.map((t) => {
  const head = `<testcase classname="${esc(t.pkg)}" name="${esc(t.name)}" time="${t.elapsed}"`;
  if (t.action === "pass") return `${head}/>`;
  if (t.action === "skip") return `${head}><skipped message="${esc(t.output.trim())}"/></testcase>`;
  const why = t.action === "run" ? "did not finish" : "failed";
  return `${head}><failure message="${why}">${esc(t.output)}</failure></testcase>`;
});
writeFileSync(
  outPath,
  `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n<testsuite name="${
    esc(suite)
  }" tests="${leaves.length}" failures="${failures}" skipped="${skips}">\n${
    cases.join("\n")
  }\n</testsuite>\n</testsuites>\n`,
);
console.log(
  `${suite}: ${leaves.length - failures - skips} passed, ${failures} failed, ${skips} skipped`,
);

function esc(text) {
  // XML 1.0 allows no control characters but tab, newline and return.
  // deno-lint-ignore no-control-regex
  return String(text).replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, "?")
    .replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
}
