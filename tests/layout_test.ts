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
  assert.equal(json("package.json").version, jsr.version);
});
