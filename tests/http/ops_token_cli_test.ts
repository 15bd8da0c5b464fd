import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HELP, parseSidecarArgs, UsageError } from "../../src/http/cli_args.ts";
import { ENV_NAMES } from "../../src/http/cli_flags.ts";
import { startSidecar, waitForStderr } from "./support.ts";

const config = (argv: string[], env: Record<string, string> = {}, file?: string) => {
  const p = parseSidecarArgs(["--limit", "10", ...argv], env, () => file ?? "{}");
  assert(p.kind === "run");
  return p.config;
};
const refused = (argv: string[], pattern: RegExp) =>
  assert.throws(
    () => parseSidecarArgs(["--limit", "10", ...argv], {}),
    (e) => e instanceof UsageError && pattern.test(e.message),
  );

describe("sidecar flags: who may call refund, reset and block", () => {
  it("reads --ops-token-file and --ops-open from the flag, the environment and the file", () => {
    const admin = ["--admin-token-file", "/a"];
    assert.equal(config([...admin, "--ops-token-file", "/o"]).opsTokenFile, "/o");
    assert.equal(config(admin, { RATEGUARD_OPS_TOKEN_FILE: "/e" }).opsTokenFile, "/e");
    const fromFile = config([...admin, "--config", "c.json"], {}, '{"ops-token-file": "/f"}');
    assert.equal(fromFile.opsTokenFile, "/f");
    assert.equal(config(admin).opsOpen, false, "closed unless said");
    assert.equal(config([...admin, "--ops-open"]).opsOpen, true);
    assert.equal(config(admin, { RATEGUARD_OPS_OPEN: "true" }).opsOpen, true);
    assert.equal(
      config([...admin, "--no-ops-open"], { RATEGUARD_OPS_OPEN: "true" }).opsOpen,
      false,
    );
    assert.ok(ENV_NAMES.includes("RATEGUARD_OPS_TOKEN_FILE"));
    assert.ok(ENV_NAMES.includes("RATEGUARD_OPS_OPEN"));
  });

  it("refuses what would leave a door open by mistake", () => {
    refused(["--ops-token-file", "/o"], /admin routes stay open: set --admin-token-file/);
    refused(
      ["--admin-token-file", "/a", "--ops-token-file", "/o", "--ops-open"],
      /--ops-token-file and --ops-open/,
    );
    refused(
      ["--admin-token-file", "/a", "--ops-token-file", "/o", "--ops-token-file", "/p"],
      /twice|more than once/,
    );
  });

  it("--help says what each route needs", () => {
    for (
      const text of [
        "--ops-token-file <path>",
        "--ops-open",
        "--no-ops-open",
        "RATEGUARD_OPS_TOKEN_FILE",
      ]
    ) {
      assert.ok(HELP.includes(text), text);
    }
    assert.match(HELP, /ops \(a token when the operator sets one, as above\): POST \/v1\/refund/);
    assert.match(HELP, /only a reset\s+with the admin token lifts it/);
  });
});

describe("a sidecar with an ops token", () => {
  it("takes it on the operations only, and a new one from its file with no restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rateguard-ops-"));
    const admin = join(dir, "admin"), ops = join(dir, "ops");
    writeFileSync(admin, "adm1n\n");
    writeFileSync(ops, "first\n");
    const s = await startSidecar([
      "--limit",
      "100",
      "--admin-token-file",
      admin,
      "--ops-token-file",
      ops,
    ]);
    try {
      const call = (path: string, token?: string) =>
        fetch(`${s.url}${path}`, {
          method: path === "/v1/stats" ? "GET" : "POST",
          headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
          body: path === "/v1/stats" ? undefined : '{"key": "k", "ms": 60000}',
        }).then(async (r) => (await r.body?.cancel(), r.status));
      assert.deepEqual(
        [
          await call("/v1/block"),
          await call("/v1/block", "first"),
          await call("/v1/stats", "first"),
        ],
        [401, 200, 401],
      );
      assert.equal(await call("/v1/reset", "first"), 200, "a service's block, a service's reset");
      assert.equal(await call("/v1/block", "adm1n"), 200);
      assert.equal(await call("/v1/reset", "first"), 409, "the operator's block stays");
      writeFileSync(ops, "second\n");
      await waitForStderr(s.process, /ops token reloaded/, 10_000);
      assert.deepEqual([await call("/v1/refund", "first"), await call("/v1/refund", "second")], [
        401,
        200,
      ]);
      writeFileSync(ops, "adm1n\n");
      await waitForStderr(s.process, /ops token file unreadable[^\n]*the two must differ/, 10_000);
      assert.equal(
        await call("/v1/refund", "second"),
        200,
        "the admin token is never the ops token",
      );
    } finally {
      s.process.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("will not start when the ops token is the admin token", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rateguard-ops-"));
    const admin = join(dir, "admin"), ops = join(dir, "ops");
    writeFileSync(admin, "same\n");
    writeFileSync(ops, "same\n");
    try {
      await assert.rejects(
        () =>
          startSidecar(["--limit", "100", "--admin-token-file", admin, "--ops-token-file", ops]),
        /--ops-token-file: .* holds the admin token: the two must differ/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
