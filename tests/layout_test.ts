import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { npmManifest, PEERS } from "../scripts/npm_package.ts";

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

test("the published npm manifest has deno.json's entry points, compiled, and only optional peers", () => {
  // The root package.json is the development manifest; what npm publishes
  // is generated from deno.json (scripts/npm_package.ts) and must keep up.
  const deno = json("deno.json");
  const root = json("package.json");
  assert.equal(root.private, true, "the development manifest cannot be published by mistake");
  const npm = npmManifest(deno, root);
  assert.equal(npm.private, undefined);
  assert.deepEqual(npm.publishConfig, { access: "public" });
  assert.deepEqual([npm.name, npm.version, npm.license], [deno.name, deno.version, deno.license]);
  const exports = npm.exports as Record<string, { types: string; import: string }>;
  assert.deepEqual(Object.keys(exports), Object.keys(deno.exports));
  for (const [subpath, source] of Object.entries(deno.exports as Record<string, string>)) {
    const stem = source.replace(/^\.\//, "./dist/").replace(/\.ts$/, "");
    assert.deepEqual(exports[subpath], { types: `${stem}.d.ts`, import: `${stem}.js` }, subpath);
  }
  assert.deepEqual(npm.bin, { rateguard: "bin/rateguard.js" });
  assert.deepEqual(npm.peerDependencies, root.dependencies, "every dependency is a peer");
  assert.deepEqual(Object.keys(PEERS).sort(), Object.keys(root.dependencies).sort());
  for (const peer of Object.keys(PEERS)) {
    assert.deepEqual((npm.peerDependenciesMeta as Record<string, unknown>)[peer], {
      optional: true,
    }, peer);
  }
  assert.equal(npm.dependencies, undefined, "a user of the bare guard installs nothing else");
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
