import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

const json = (path: string) => JSON.parse(readFileSync(path, "utf8"));

test("jsr.json and deno.json describe the same package", () => {
  // `deno publish` reads deno.json whenever it exists and ignores jsr.json,
  // so the package metadata lives in both and must agree.
  const deno = json("deno.json");
  const jsr = json("jsr.json");
  for (const field of ["name", "version", "license", "exports", "publish"]) {
    assert.deepEqual(jsr[field], deno[field], field);
  }
  assert.equal(jsr.name, "@rateguard/guard");
  const npm = json("package.json");
  assert.equal(npm.version, jsr.version);
  assert.deepEqual(npm.exports, deno.exports, "package.json exports the same entry points");
});

test("the README's test command is what CI runs", () => {
  const readme = readFileSync("README.md", "utf8");
  const ci = readFileSync(".ci/run", "utf8");
  const command = "npm ci && npm test";
  assert.ok(
    readme.split("\n").includes(command),
    "README shows the test command on a line of its own",
  );
  assert.ok(ci.split("\n").includes(command), ".ci/run runs it");
  assert.ok(
    readme.includes("npm ci && npx deno run -A cli.ts --limit 1000/min"),
    "README shows the start command",
  );
});
