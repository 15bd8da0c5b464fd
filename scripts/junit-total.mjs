// Totals the JUnit reports of the three runtimes into one line,
// "N passed, N failed, N skipped", counting leaf test cases only: Deno reports a
// node:test `describe` both as a case and as the parent of its steps
// ("group > one"), so a case that has steps is not counted itself.
// A runner that exited non-zero without reporting a failure (a file that
// failed to load, a crash) counts as one failed test, so nothing passes
// silently. A skipped case (a PostgreSQL test with no server, say) is
// neither passed nor failed, but counted and shown, so a skip cannot pass for
// a test that ran. Bun's report leaves out a file whose every test was
// skipped (a skipped describe); given the list of test files (files.txt in
// the directory), each file Bun ran and reported nothing of counts as one
// skipped, so it is not dropped from the total.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const [dir, ...runtimes] = process.argv.slice(2);
let passed = 0;
let failed = 0;
let skipped = 0;
for (const rt of runtimes) {
  const xmlPath = join(dir, `${rt}.xml`);
  const rc = Number(readFileSync(join(dir, `${rt}.rc`), "utf8").trim());
  const all = existsSync(xmlPath) ? parseCases(readFileSync(xmlPath, "utf8")) : [];
  const s = all.filter((c) => c.skipped).length + (rt === "bun" ? unreported(dir, xmlPath) : 0);
  const cases = all.filter((c) => !c.skipped);
  const names = new Set(cases.map((c) => c.name));
  const leaves = cases.filter((c) =>
    rt !== "deno" || ![...names].some((n) => n.startsWith(`${c.name} > `))
  );
  const f = leaves.filter((c) => c.failed).length;
  let p = leaves.length - f;
  let extra = 0;
  if (rc !== 0 && f === 0) extra = 1;
  // No report at all is a failure; one whose cases were all skipped is not.
  if (all.length === 0 && rc === 0) extra = 1, p = 0;
  console.log(`${rt}: ${p} passed, ${f + extra} failed, ${s} skipped`);
  skipped += s;
  passed += p;
  failed += f + extra;
}
const checksDir = join(dir, "checks");
if (existsSync(checksDir)) {
  const rcs = readdirSync(checksDir).filter((f) => f.endsWith(".rc"));
  const bad = rcs.filter((f) => readFileSync(join(checksDir, f), "utf8").trim() !== "0");
  console.log(`checks: ${rcs.length - bad.length} passed, ${bad.length} failed`);
  passed += rcs.length - bad.length;
  failed += bad.length;
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed === 0 ? 0 : 1);

/** How many files of files.txt Bun's report has no suite for. */
function unreported(dir, xmlPath) {
  const list = join(dir, "files.txt");
  if (!existsSync(list) || !existsSync(xmlPath)) return 0;
  const xml = readFileSync(xmlPath, "utf8");
  const files = readFileSync(list, "utf8").split("\n").filter((f) => f !== "");
  return files.filter((f) => !xml.includes(`<testsuite name="${f}"`)).length;
}

function parseCases(xml) {
  const out = [];
  // Attributes read as quoted strings: a `>` inside one (legal there, and
  // Node's reporter leaves it unescaped) does not end the tag.
  const re = /<testcase\b((?:[^>"]|"[^"]*")*?)(\/>|>([\s\S]*?)<\/testcase>)/g;
  for (const m of xml.matchAll(re)) {
    const name = decode(/\bname="([^"]*)"/.exec(m[1])?.[1] ?? "");
    const body = m[3] ?? "";
    const failed = /<(failure|error)\b/.test(body) || /\bfailure="/.test(m[1]);
    const skipped = /<skipped\b/.test(body);
    out.push({ name, failed, skipped });
  }
  return out;
}

function decode(s) {
  return s.replaceAll("&gt;", ">").replaceAll("&lt;", "<").replaceAll("&quot;", '"')
    .replaceAll("&apos;", "'").replaceAll("&amp;", "&");
}
