import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HELP, parseSidecarArgs, UsageError } from "../../src/http/cli_args.ts";
import { GUARD_BOUNDS, HTTP_BOUNDS } from "../../src/core/options.ts";
import { start } from "../support/process.ts";
import { isAnswer } from "../../src/http/cli_flags.ts";
import { Limit } from "../../src/core/limit.ts";

const config = (argv: string[], env: Record<string, string> = {}, file?: unknown) => {
  const p = parseSidecarArgs(argv, env, () => JSON.stringify(file));
  assert.equal(p.kind, "run");
  return p.kind === "run" ? p.config : undefined!;
};

const refused = (argv: string[], env: Record<string, string>, message: RegExp, file?: string) =>
  assert.throws(
    () => parseSidecarArgs(argv, env, () => file ?? "{}"),
    (e) => e instanceof UsageError && message.test(e.message) && !e.message.includes("\n"),
    `${argv.join(" ")} ${JSON.stringify(env)} -> ${message}`,
  );

describe("sidecar flags: mistakes are refused, naming the flag", () => {
  it("checks every numeric flag against GUARD_BOUNDS, naming the flag or variable", () => {
    const base = ["--limit", "10"];
    refused([...base, "--hot-keys", "65"], {}, /^--hot-keys: .*from 1 to 64, got 65$/);
    refused([...base, "--tracked-keys", "0"], {}, /^--tracked-keys: .* got 0$/);
    refused([...base, "--max-members", "0"], {}, /^--max-members: .* got 0$/);
    refused([...base, "--max-classes", "4097"], {}, /^--max-classes: .*0 to 4096/);
    refused([...base, "--max-key-limits", "x"], {}, /^--max-key-limits: .*got "x"$/);
    refused([...base, "--max-blocks", "0"], {}, /^--max-blocks: .*from 1 to 65536, got 0$/);
    refused(base, { RATEGUARD_MAX_BLOCKS: "65537" }, /^RATEGUARD_MAX_BLOCKS: .*got 65537$/);
    refused([...base, "--protocol-period", "5ms"], {}, /^--protocol-period: .*10ms to 60000ms/);
    refused(base, { RATEGUARD_HOT_KEYS: "99" }, /^RATEGUARD_HOT_KEYS: .*got 99$/);
    refused([...base, "--tracked-keys", "8"], {}, /^--tracked-keys \(8\) .* --hot-keys \(64\)/);
    const c = config([...base, "--max-classes", "2", "--max-key-limits", "0"]);
    assert.deepEqual([c.maxClasses, c.maxKeyLimits, c.trackedKeys], [
      2,
      0,
      GUARD_BOUNDS.trackedKeys.default,
    ]);
    assert.equal(config(base).maxBlocks, GUARD_BOUNDS.maxBlocks.default);
    assert.equal(config([...base, "--max-blocks", "16"]).maxBlocks, 16);
    assert.equal(config(base, { RATEGUARD_MAX_BLOCKS: "32" }).maxBlocks, 32);
  });

  it("reads a window of any length, as Limit.per makes it, and refuses one out of range", () => {
    assert.ok(config(["--limit", "100/15min"]).limit.equals(Limit.per(100, 900_000)));
    assert.ok(
      config([], { RATEGUARD_LIMIT: "10000/d" }).limit.equals(
        Limit.per(10_000, 86_400_000),
      ),
    );
    refused(["--limit", "1/0s"], {}, /^--limit: .*period must be a whole number of milliseconds/);
  });

  it("reads a negative number as a bad number, not an ambiguous argument", () => {
    refused(["--limit", "10", "--burst", "-1"], {}, /^--burst: expected a whole number, got "-1"$/);
    refused(["--limit", "-5"], {}, /^--limit: /);
  });

  it("names --advertise when --bind listens on every address", () => {
    refused(["--limit", "1", "--bind", "0.0.0.0:7946"], {}, /set --advertise <ip:port>/);
    refused(["--limit", "1", "--bind", "[::]:7946"], {}, /set --advertise/);
    refused(
      ["--limit", "1", "--bind", "10.0.0.1:1", "--advertise", "0.0.0.0:1"],
      {},
      /^--advertise: /,
    );
    const c = config([
      "--limit",
      "1",
      "--bind",
      "0.0.0.0:7946",
      "--advertise",
      "10.0.0.3:7946",
      "--gossip-auth",
      "off",
    ]);
    assert.equal(c.bind, "0.0.0.0:7946");
  });

  it("takes an empty variable as unset", () => {
    const c = config(["--limit", "10/s"], { RATEGUARD_BURST: "", RATEGUARD_HOT_KEYS: " " });
    assert.equal(c.limit.burstSize(), config(["--limit", "10/s"]).limit.burstSize());
    assert.equal(c.hotKeys, GUARD_BOUNDS.hotKeys.default);
  });

  it("gives a class its burst, refuses a class twice, and bounds the classes", () => {
    const c = config(["--limit", "1", "--class", "free=10/s,burst=20", "--class", "pro=100/s"]);
    assert.deepEqual(c.classes.map(([n, l]) => `${n}=${l}`), ["free=10/s burst 20", "pro=100/s"]);
    const e = config(["--limit", "1"], { RATEGUARD_CLASS: "free=10/s,burst=20;pro=100/s" });
    assert.deepEqual(e.classes.map(([n, l]) => [n, l.burstSize()]), [["free", 20], ["pro", 5]]);
    refused(
      ["--limit", "1", "--class", "free=10/s", "--class", "free=20/s"],
      {},
      /"free" is given twice/,
    );
    refused(
      ["--limit", "1"],
      { RATEGUARD_CLASS: "a=1;a=2" },
      /^RATEGUARD_CLASS: .*"a" is given twice/,
    );
    refused(["--limit", "1", "--class", "burst=3"], {}, /needs a class before it/);
    refused(["--limit", "1", "--class", "free=10/s,burst=x"], {}, /^--class free: .*"x"/);
    refused(
      ["--limit", "1", "--max-classes", "1", "--class", "a=1", "--class", "b=1"],
      {},
      /more than --max-classes \(1\)/,
    );
  });

  it("lists every flag's variable in --help", () => {
    for (const flag of HELP.matchAll(/^\s+--([a-z-]+)/gm)) {
      if (isAnswer(flag[1])) continue;
      const name = `RATEGUARD_${flag[1].toUpperCase().replaceAll("-", "_")}`;
      assert.match(HELP, new RegExp(`\\b${name}\\b`), name);
    }
  });
});

describe("sidecar flags: --config", () => {
  it("reads a JSON file of flags by name; flags beat the environment, which beats the file", () => {
    const file = {
      limit: "5/s",
      "hot-keys": 8,
      "dry-run": true,
      class: ["free=1/s,burst=2"],
      seeds: ["10.0.0.1:7946"],
      bind: "127.0.0.1:0",
      "gossip-auth": "off",
    };
    const c = config(["--config", "rg.json"], {}, file);
    assert.deepEqual(
      [String(c.limit), c.hotKeys, c.dryRun, c.classes.length, c.seeds],
      ["5/s", 8, true, 1, ["10.0.0.1:7946"]],
    );
    const env = { RATEGUARD_HOT_KEYS: "16", RATEGUARD_LIMIT: "6/s" };
    const over = config(["--config", "rg.json", "--limit", "7/s"], env, file);
    assert.deepEqual([String(over.limit), over.hotKeys], ["7/s", 16]);
    const fromEnv = config([], { RATEGUARD_CONFIG: "rg.json" }, file);
    assert.equal(String(fromEnv.limit), "5/s");
  });

  it("reads --shared-burst from the flag, the environment and the file; unset by default", () => {
    // Unset, the burst follows the fleet's size (GuardOptions.sharedBurst).
    assert.equal(config(["--limit", "5"]).sharedBurst, undefined);
    assert.equal(config(["--limit", "5", "--no-shared-burst"]).sharedBurst, false);
    assert.equal(config(["--limit", "5", "--shared-burst"]).sharedBurst, true);
    assert.equal(config(["--limit", "5"], { RATEGUARD_SHARED_BURST: "true" }).sharedBurst, true);
    const file = { limit: "5/s", "shared-burst": true };
    assert.equal(config(["--config", "rg.json"], {}, file).sharedBurst, true);
    const off = config(["--config", "rg.json"], { RATEGUARD_SHARED_BURST: "false" }, file);
    assert.equal(off.sharedBurst, false, "the environment beats the file");
    refused(["--limit", "5"], { RATEGUARD_SHARED_BURST: "maybe" }, /RATEGUARD_SHARED_BURST/);
  });

  it("refuses an unknown key, a bad value and a file that is not JSON, naming each", () => {
    const argv = ["--config", "rg.json"];
    refused(argv, {}, /^rg\.json: unknown key "hotkeys"/, '{"limit": "1", "hotkeys": 3}');
    refused(argv, {}, /^rg\.json: hot-keys: .*got 65$/, '{"limit": "1", "hot-keys": 65}');
    refused(argv, {}, /^rg\.json: limit: /, '{"limit": {"count": 1}}');
    refused(argv, {}, /^--config rg\.json: not valid JSON/, "limit = 1");
    refused(argv, {}, /^--config rg\.json: expected a JSON object/, "[]");
    refused(argv, {}, /unknown key "config"/, '{"config": "other.json"}');
    assert.throws(
      () => parseSidecarArgs(["--config", "/nonexistent/rateguard.json"], {}),
      (e) =>
        e instanceof UsageError &&
        /^--config: cannot read \/nonexistent\/rateguard\.json/.test(e.message),
    );
  });

  it("is read by the sidecar process, which exits 2 on a mistake in it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rateguard-config-"));
    const path = join(dir, "rateguard.json");
    writeFileSync(path, JSON.stringify({ limit: "10/s", "hot-keys": 65 }));
    const p = start("cli.ts", ["--config", path, "--http", "127.0.0.1:0"]);
    try {
      assert.equal(await p.exited(), 2);
      assert.equal(
        p.stderr().trim(),
        `rateguard: ${path}: hot-keys: expected a whole number from 1 to 64, got 65`,
      );
    } finally {
      p.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("sidecar flags: the HTTP server's bounds", () => {
  it("reads them within HTTP_BOUNDS, the header timeout no longer than the request's", () => {
    const d = config(["--limit", "1"]).http;
    assert.deepEqual(
      [d.headersTimeoutMs, d.requestTimeoutMs, d.idleTimeoutMs, d.maxConnections],
      [
        HTTP_BOUNDS.headersTimeoutMs.default,
        HTTP_BOUNDS.requestTimeoutMs.default,
        HTTP_BOUNDS.idleTimeoutMs.default,
        HTTP_BOUNDS.maxConnections.default,
      ],
    );
    const argv = ["--limit", "1", "--header-timeout", "2s", "--request-timeout", "5s"];
    const c = config([...argv, "--idle-timeout", "500ms", "--max-connections", "64"]).http;
    assert.deepEqual([c.headersTimeoutMs, c.requestTimeoutMs, c.idleTimeoutMs, c.maxConnections], [
      2_000,
      5_000,
      500,
      64,
    ]);
    // The drain bound of a shutdown: 10 s unless set, 0 closing at once.
    assert.equal(d.drainTimeoutMs, HTTP_BOUNDS.drainTimeoutMs.default);
    assert.equal(config(["--limit", "1", "--drain-timeout", "0"]).http.drainTimeoutMs, 0);
    assert.equal(
      config(["--limit", "1"], { RATEGUARD_DRAIN_TIMEOUT: "3s" }).http.drainTimeoutMs,
      3_000,
    );
    refused(["--limit", "1", "--drain-timeout", "11min"], {}, /^--drain-timeout: .*to 600000ms/);
    refused(
      ["--limit", "1", "--drain-timeout", "1s", "--drain-timeout", "2s"],
      {},
      /drain-timeout/,
    );
    refused(["--limit", "1", "--header-timeout", "5ms"], {}, /^--header-timeout: .*from 100ms/);
    refused(["--limit", "1", "--max-connections", "0"], {}, /^--max-connections: .*got 0$/);
    // One address's share of the connections: 256 unless set, from the flag or the environment.
    assert.equal(d.maxConnectionsPerClient, HTTP_BOUNDS.maxConnectionsPerClient.default);
    assert.equal(
      config(["--limit", "1", "--max-connections-per-client", "8"]).http.maxConnectionsPerClient,
      8,
    );
    assert.equal(
      config(["--limit", "1"], { RATEGUARD_MAX_CONNECTIONS_PER_CLIENT: "32" }).http
        .maxConnectionsPerClient,
      32,
    );
    refused(
      ["--limit", "1", "--max-connections-per-client", "0"],
      {},
      /^--max-connections-per-client: .*got 0$/,
    );
    refused(["--limit", "1"], { RATEGUARD_IDLE_TIMEOUT: "soon" }, /^RATEGUARD_IDLE_TIMEOUT: /);
    refused(
      ["--limit", "1", "--header-timeout", "40s"],
      {},
      /at most --request-timeout \(30000ms\)/,
    );
  });

  it("serves on the native server on loopback and on node:http elsewhere, unless --http-server says", () => {
    const server = (argv: string[], env: Record<string, string> = {}) =>
      config(["--limit", "1", ...argv], env).http.server;
    assert.equal(server([]), "native", "the default address, 127.0.0.1");
    assert.equal(server(["--http", "[::1]:7947"]), "native");
    assert.equal(server(["--http", "0.0.0.0:7947"]), "node", "bounds where others reach it");
    assert.equal(server(["--http", "0.0.0.0:7947", "--http-server", "native"]), "native");
    assert.equal(server([], { RATEGUARD_HTTP_SERVER: "node" }), "node");
    refused(
      ["--limit", "1", "--http-server", "deno"],
      {},
      /^--http-server: expected auto, native or node/,
    );
  });
});
