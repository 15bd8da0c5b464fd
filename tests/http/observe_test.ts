import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { Guard, Limit } from "../../mod.ts";
import { sidecarApp } from "../../src/http/sidecar.ts";
import { parseSidecarArgs, UsageError } from "../../src/http/cli_args.ts";
import { readSaltFile, readSecretFile, readTokenFile } from "../../src/http/secrets.ts";
import { eventually, startSidecar, waitForStderr } from "./support.ts";

const dir = mkdtempSync(join(tmpdir(), "rateguard-"));
const file = (name: string, contents: string | Uint8Array) => {
  const path = join(dir, name);
  writeFileSync(path, contents);
  return path;
};
const b64 = (fill: number, n = 32) => btoa(String.fromCharCode(...new Uint8Array(n).fill(fill)));

describe("sidecar: one key's counters and the metrics", () => {
  it("GET /v1/keys tells one key's story; an unknown key is a 404 and creates nothing", async () => {
    const guard = await Guard.builder().defaultLimit(Limit.perHour(2).burst(2)).spawn();
    const app = sidecarApp(guard, { defaultLimit: Limit.perHour(2).burst(2) });
    for (let i = 0; i < 3; i++) {
      await app.request("/v1/check", { method: "POST", body: '{"key": "t"}' });
    }
    const res = await app.request("/v1/keys?key=t");
    assert.equal(res.status, 200);
    const k = await res.json();
    assert.equal(k.limit, "2/h burst 2");
    assert.equal(k.shadow, null);
    assert.ok(k.requestsPerSec > 0 && k.deniedPerSec > 0);
    const none = await app.request("/v1/keys?class=pro&key=nobody");
    assert.equal(none.status, 404);
    assert.equal(none.headers.get("content-type"), "application/problem+json");
    assert.equal((await app.request("/v1/keys")).status, 400);
    assert.equal(guard.stats().trackedKeys, 1);
  });

  it("GET /metrics is Prometheus text with the guard's figures; behind the admin token when set", async () => {
    const guard = await Guard.builder().defaultLimit(Limit.perHour(1).burst(1)).spawn();
    const app = sidecarApp(guard, {
      defaultLimit: Limit.perHour(1).burst(1),
      adminToken: () => "s3cret",
    });
    for (let i = 0; i < 2; i++) {
      await app.request("/v1/check", { method: "POST", body: '{"key": "t"}' });
    }
    assert.equal((await app.request("/metrics")).status, 401);
    const res = await app.request("/metrics", { headers: { authorization: "Bearer s3cret" } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type")!, /^text\/plain; version=0.0.4/);
    const families = parsePrometheusTextFormat(await res.text()) as Array<{
      name: string;
      metrics: Array<{ value: string; labels: Record<string, string> }>;
    }>;
    const checks = families.find((f) => f.name === "rateguard_checks_total")!;
    assert.deepEqual(checks.metrics.map((m) => [m.labels.decision, m.value]), [["allow", "1"], [
      "deny",
      "1",
    ]]);
    assert.ok(checks.metrics.every((m) => m.labels.guard === "standalone"));
  });
});

describe("sidecar: secrets from files", () => {
  it("reads secrets as base64 lines, the salt as raw bytes and the token as a line, naming what is wrong", () => {
    assert.equal(readSecretFile(file("one", `${b64(1)}\n`)).length, 1);
    assert.equal(readSecretFile(file("two", `${b64(1)}\n${b64(2)}\n`)).length, 2);
    assert.throws(
      () => readSecretFile(file("three", `${b64(1)}\n${b64(2)}\n${b64(3)}\n`)),
      /at most two/,
    );
    assert.throws(() => readSecretFile(file("short", `${b64(1, 16)}\n`)), /line 1: .*32/);
    assert.throws(() => readSecretFile(file("junk", "not base64!\n")), /line 1: not base64/);
    assert.throws(() => readSecretFile(file("empty", "\n")), /no secret/);
    assert.equal(readSaltFile(file("salt", new Uint8Array(16).fill(7))).length, 16);
    assert.throws(() => readSaltFile(file("thin", new Uint8Array(8))), /at least 16/);
    assert.equal(readTokenFile(file("token", "t0k3n\n")), "t0k3n");
    assert.throws(() => readTokenFile(file("blank", "\n")), /blank must hold one token/);
    assert.throws(() => readTokenFile(join(dir, "absent")), /cannot read .*absent/);
  });

  it("parses --gossip-auth and refuses signing without a secret", () => {
    const p = parseSidecarArgs([
      "--limit",
      "10",
      "--gossip-auth",
      "required",
      "--gossip-secret-file",
      "/s",
    ], {});
    assert.ok(
      p.kind === "run" && p.config.gossipAuth === "required" && p.config.gossipSecretFile === "/s",
    );
    const env = parseSidecarArgs(["--limit", "10"], { RATEGUARD_KEY_SALT_FILE: "/salt" });
    assert.ok(
      env.kind === "run" && env.config.keySaltFile === "/salt" && env.config.gossipAuth === "off",
    );
    assert.throws(
      () => parseSidecarArgs(["--limit", "10", "--gossip-auth", "required"], {}),
      (e) => e instanceof UsageError && /--gossip-secret-file/.test(e.message),
    );
    assert.throws(
      () => parseSidecarArgs(["--limit", "10", "--gossip-auth", "strict"], {}),
      (e) => e instanceof UsageError && /--gossip-auth.*"strict"/.test(e.message),
    );
  });

  it("a sidecar takes a new admin token from its file with no restart, and keeps it over a bad one", async () => {
    const token = file("admin-token", "first\n");
    const s = await startSidecar(["--limit", "100", "--admin-token-file", token]);
    try {
      const stats = (bearer: string) =>
        fetch(`${s.url}/v1/stats`, { headers: { authorization: `Bearer ${bearer}` } })
          .then(async (r) => (await r.body?.cancel(), r.status));
      assert.equal(await stats("first"), 200);
      writeFileSync(token, "second\n");
      await waitForStderr(s.process, /admin token reloaded/, 10_000);
      assert.deepEqual([await stats("first"), await stats("second")], [401, 200]);
      writeFileSync(token, "two words\n");
      await waitForStderr(s.process, /keeping the token in use/, 10_000);
      assert.equal(await stats("second"), 200);
    } finally {
      s.process.kill();
    }
  });

  it("a sidecar signs with its secret file and takes a rotation from it with no restart", async () => {
    const secrets = file("gossip-secret", `${b64(0xa)}\n`);
    const salt = file("key-salt", new Uint8Array(16).fill(3));
    const s = await startSidecar(
      [
        "--limit",
        "100",
        "--gossip-auth",
        "required",
        "--gossip-secret-file",
        secrets,
        "--key-salt-file",
        salt,
      ],
      { fleet: true },
    );
    try {
      const stats = async () => await (await fetch(`${s.url}/v1/stats`)).json();
      assert.equal((await stats()).gossipAuth, "required");
      writeFileSync(secrets, `${b64(0xb)}\n${b64(0xa)}\n`);
      await waitForStderr(s.process, /gossip secrets reloaded[^\n]*"secrets":2/, 10_000);
      writeFileSync(secrets, "garbage\n");
      await waitForStderr(s.process, /keeping the secrets in use/, 10_000);
      await eventually(async () => (await stats()).running === true, "still running");
    } finally {
      s.process.kill();
    }
  });
});
