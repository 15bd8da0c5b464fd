// The Python client's own unittest suite, against a real sidecar. It runs
// once per gate, under Node only: the sidecar and Python are the same
// whichever runtime drives the test.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { currentRuntime } from "../support/process.ts";
import { run, startSidecar } from "../http/support.ts";

if (currentRuntime === "node") {
  describe("Python client (run on Node only)", () => {
    it("passes its unittest suite against a sidecar process", async () => {
      const dir = mkdtempSync(join(tmpdir(), "rateguard-py-"));
      writeFileSync(join(dir, "token"), "py-t0ken\n");
      const sidecar = await startSidecar([
        "--limit",
        "100",
        "--admin-token-file",
        join(dir, "token"),
      ]);
      try {
        const { code, output } = await run("python3", [
          "-m",
          "unittest",
          "discover",
          "-v",
          "-s",
          "sdk/python/tests",
        ], {
          RATEGUARD_URL: sidecar.url,
          RATEGUARD_ADMIN_TOKEN: "py-t0ken",
          PYTHONDONTWRITEBYTECODE: "1",
        });
        assert.equal(code, 0, output);
        assert.match(output, /\nOK\b/);
        assert.doesNotMatch(output, /skipped/, "every Python test ran");
      } finally {
        sidecar.process.kill();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
