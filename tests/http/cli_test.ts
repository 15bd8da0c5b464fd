import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { HELP, parseSidecarArgs, UsageError } from "../../src/http/cli_args.ts";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:net";
import { start } from "../support/process.ts";
import { VERSION } from "../../src/version.ts";
import { Guard, Limit } from "../../mod.ts";
import { sidecarApp } from "../../src/http/sidecar.ts";
import { eventually, postJson, startSidecar, waitForStderr } from "./support.ts";

describe("sidecar flags", () => {
  it("reads flags, and the environment where a flag is missing", () => {
    const p = parseSidecarArgs([
      "--limit",
      "1000/min",
      "--class",
      "free=10/s",
      "--class",
      "pro=5000/h",
      "--burst",
      "7",
    ], {
      RATEGUARD_HTTP: "127.0.0.1:9000",
      RATEGUARD_LIMIT: "1/s",
    });
    assert.equal(p.kind, "run");
    if (p.kind !== "run") return;
    assert.equal(String(p.config.limit), "1000/min burst 7");
    assert.deepEqual(p.config.classes.map(([n, l]) => `${n}=${l}`), ["free=10/s", "pro=5000/h"]);
    assert.deepEqual([p.config.http.hostname, p.config.http.port], ["127.0.0.1", 9000]);
    const e = parseSidecarArgs([], {
      RATEGUARD_LIMIT: "5/s",
      RATEGUARD_CLASS: "a=1;b=2/min",
      RATEGUARD_DRY_RUN: "true",
    });
    assert.ok(e.kind === "run" && e.config.dryRun && e.config.classes.length === 2);
    assert.ok(e.kind === "run" && !e.config.fleetRules, "fleet rules are off by default");
    const shared = parseSidecarArgs([
      "--limit",
      "1",
      "--bind",
      "127.0.0.1:0",
      "--gossip-auth",
      "off",
    ], {
      RATEGUARD_FLEET_RULES: "true",
    });
    assert.ok(shared.kind === "run" && shared.config.fleetRules);
    assert.ok(e.kind === "run" && e.config.http.port === 7947);
    const v6 = parseSidecarArgs(["--limit", "1", "--http", "[::1]:0"], {});
    assert.ok(v6.kind === "run" && v6.config.http.hostname === "::1");
    assert.deepEqual(parseSidecarArgs(["--help"], {}), { kind: "help", text: HELP });
    // Like --help, --version answers whatever else is given, and nothing else is read.
    const version = { kind: "version", text: `rateguard ${VERSION}\n` };
    assert.deepEqual(parseSidecarArgs(["--version"], {}), version);
    assert.deepEqual(parseSidecarArgs(["--version", "--version"], {}), version);
    assert.deepEqual(parseSidecarArgs(["--version"], { RATEGUARD_LIMIT: "bad" }), version);
    assert.match(HELP, /--version\b/);
  });

  it("--help names every route the sidecar serves, refund, reset and block among them", async () => {
    const guard = await Guard.builder().limit(1).spawn();
    const paths = new Set(
      sidecarApp(guard, { defaultLimit: Limit.perSecond(1) }).routes.map((r) => r.path),
    );
    await guard.leave();
    for (const ops of ["/v1/refund", "/v1/reset", "/v1/block"]) assert.ok(paths.has(ops), ops);
    for (const path of paths) {
      if (path === "/dashboard/app.js") continue; // the dashboard page's own script
      assert.ok(HELP.includes(path), `--help names ${path}`);
    }
  });

  it("reads the fleet's flags", () => {
    const p = parseSidecarArgs([
      "--limit=5",
      "--bind=0.0.0.0:7946",
      "--advertise=10.0.0.3:7946",
      "--partition-policy=quorum",
      "--protocol-period=1s",
      "--hot-keys=8",
      "--max-members=100",
      "--log-format=json",
      "--gossip-auth=off",
    ], { RATEGUARD_SEEDS: "10.0.0.1:7946, rateguard.default.svc:7946" });
    assert.ok(p.kind === "run");
    const c = p.config;
    assert.deepEqual([c.bind, c.advertise, c.seeds], [
      "0.0.0.0:7946",
      "10.0.0.3:7946",
      ["10.0.0.1:7946", "rateguard.default.svc:7946"],
    ]);
    assert.deepEqual(
      [String(c.partitionPolicy), c.protocolPeriodMs, c.hotKeys, c.maxMembers, c.logFormat],
      ["quorum", 1_000, 8, 100, "json"],
    );
    const standalone = parseSidecarArgs(["--limit", "5"], {});
    assert.ok(standalone.kind === "run" && standalone.config.bind === undefined);
    assert.equal(standalone.config.logFormat, "text");
    for (const flag of Object.keys(standalone.config)) {
      if (flag === "classes" || flag === "limit") continue;
      const name = flag.replace(/Ms$/, "").replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
      assert.match(HELP, new RegExp(`--${name}\\b`), `--help lists --${name}`);
    }
  });

  it("names the flag at fault", () => {
    const bad: Array<[string[], Record<string, string>, RegExp]> = [
      [[], {}, /--limit is required/],
      [["--limit", "ten"], {}, /--limit.*"ten"/],
      [["--limit", "1", "--burst", "-3"], {}, /--burst/],
      [["--limit", "1", "--class", "free"], {}, /--class.*"free"/],
      [["--limit", "1", "--http", "localhost"], {}, /--http/],
      [["--limit", "1", "--nope"], {}, /--nope/],
      [["--limit", "1"], { RATEGUARD_DRY_RUN: "maybe" }, /RATEGUARD_DRY_RUN.*"maybe"/],
      [["--limit", "1", "--seeds", "a:1"], {}, /--seeds need --bind/],
      [["--limit", "1", "--fleet-rules"], {}, /--fleet-rules .*needs --bind/],
      [["--limit", "1"], { RATEGUARD_FLEET_RULES: "sure" }, /RATEGUARD_FLEET_RULES.*"sure"/],
      [["--limit", "1", "--bind", "x"], {}, /--bind/],
      [
        ["--limit", "1"],
        { RATEGUARD_PARTITION_POLICY: "hope" },
        /^RATEGUARD_PARTITION_POLICY: .*"hope"/,
      ],
      [["--limit", "1", "--protocol-period", "soon"], {}, /--protocol-period/],
      [["--limit", "1", "--log-format", "xml"], {}, /--log-format/],
      [["--limit", "1", "--hot-keys", "many"], {}, /--hot-keys/],
    ];
    for (const [argv, env, message] of bad) {
      assert.throws(
        () => parseSidecarArgs(argv, env),
        (e) => e instanceof UsageError && message.test(e.message),
        argv.join(" "),
      );
    }
  });
});

describe("sidecar process", () => {
  it("enforces its limit, guards admin routes with the token file, exits 0 on SIGTERM", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rateguard-"));
    const tokenFile = join(dir, "token");
    writeFileSync(tokenFile, "t0k3n\n");
    const s = await startSidecar(["--limit", "2/min", "--admin-token-file", tokenFile]);
    try {
      assert.equal(s.gossip, "standalone");
      const check = () => postJson(`${s.url}/v1/check`, { key: "tenant:42" });
      assert.deepEqual([(await check()).allowed, (await check()).allowed], [true, false]);
      const bad = await fetch(`${s.url}/v1/check`, {
        method: "POST",
        body: '{"key": "k", "cost": "1"}',
      });
      assert.equal(bad.status, 400);
      assert.equal((await bad.json()).field, "/cost");
      assert.equal((await fetch(`${s.url}/v1/stats`)).status, 401);
      const stats = await fetch(`${s.url}/v1/stats`, {
        headers: { authorization: "Bearer t0k3n" },
      });
      assert.equal((await stats.json()).denied, 1);
      assert.equal((await fetch(`${s.url}/readyz`)).status, 200);
      s.process.child.kill("SIGTERM");
      const code = await s.process.exited();
      await waitForStderr(s.process, /"msg":"stopped"/);
      // Deno's child_process reports a child it signalled as killed by the
      // signal even when the child exited 0 itself; the log line above is
      // the proof there that the handler ran.
      if (!("Deno" in globalThis)) assert.equal(code, 0);
    } finally {
      s.process.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("finishes a request in flight when told to stop", async () => {
    const s = await startSidecar(["--limit", "10"]);
    try {
      // A body that arrives in two parts, the second after SIGTERM.
      let rest!: () => void;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"key": '));
          rest = () => {
            controller.enqueue(new TextEncoder().encode('"in-flight"}'));
            controller.close();
          };
        },
      });
      const pending = fetch(`${s.url}/v1/check`, {
        method: "POST",
        body,
        headers: { "content-type": "application/json" },
        duplex: "half",
      } as RequestInit);
      await eventually(async () => {
        const stats = await (await fetch(`${s.url}/v1/stats`)).json();
        return stats.trackedKeys === 0; // the sidecar answers: the upload has begun
      }, "the sidecar to answer");
      s.process.child.kill("SIGTERM");
      await waitForStderr(s.process, /"msg":"stopping"/);
      rest();
      const res = await pending;
      assert.equal(res.status, 200, s.process.stderr());
      assert.equal((await res.json()).allowed, true);
      await waitForStderr(s.process, /"msg":"stopped"/);
    } finally {
      s.process.kill();
    }
  });

  it("exits on SIGTERM once the last response is sent, not when its connection idles out", async () => {
    // The last response goes out on a kept-alive connection that would idle
    // for 60 s: the exit must not wait for it (Node's server did, 5 s by default).
    const s = await startSidecar(["--limit", "10", "--idle-timeout", "60s"]);
    const socket = connect(Number(new URL(s.url).port), "127.0.0.1");
    try {
      let received = "";
      socket.on("data", (d) => (received += d));
      socket.on("error", () => {});
      socket.write('POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n{"key"');
      // Time for the headers to arrive: until they do, the connection is idle, and a
      // close may rightly drop it.
      await new Promise((resolve) => setTimeout(resolve, 300));
      s.process.child.kill("SIGTERM");
      await waitForStderr(s.process, /"msg":"stopping"/);
      socket.write(':"k"}');
      await eventually(() => Promise.resolve(/"allowed":true/.test(received)), "the answer");
      const answeredMs = Date.now();
      await s.process.exited(30_000);
      const tookMs = Date.now() - answeredMs;
      assert.ok(tookMs < 30_000, `exited ${tookMs} ms after the answer, well within the 60 s`);
      await waitForStderr(s.process, /"msg":"stopped"/);
    } finally {
      socket.destroy();
      s.process.kill();
    }
  });

  it("joins another sidecar with --bind and --seeds, and is ready once joined", async () => {
    const first = await startSidecar(["--limit", "100"], { fleet: true });
    try {
      const second = await startSidecar(["--limit", "100", "--seeds", first.gossip], {
        fleet: true,
      });
      try {
        await eventually(async () => {
          const stats = await (await fetch(`${second.url}/v1/stats`)).json();
          return stats.clusterSize === 2 && !stats.joining;
        }, "two members");
        assert.equal((await fetch(`${second.url}/readyz`)).status, 200);
      } finally {
        second.process.kill();
      }
    } finally {
      first.process.kill();
    }
  });

  it("refuses a bad flag with one line and exit code 2", async () => {
    const p = start("cli.ts", ["--limit", "1000/fortnight"]);
    try {
      assert.equal(await p.exited(), 2);
      const lines = p.stderr().trim().split("\n");
      assert.equal(lines.length, 1, p.stderr());
      assert.match(lines[0], /^rateguard: --limit: .*fortnight/);
    } finally {
      p.kill();
    }
  });

  it("prints its version and exits 0", async () => {
    const p = start("cli.ts", ["--version"]);
    try {
      assert.equal(await p.exited(), 0);
      assert.equal(p.stdout(), `rateguard ${VERSION}\n`);
      assert.equal(p.stderr(), "");
    } finally {
      p.kill();
    }
  });

  it("starts nothing when imported: the bin and JSR users call main()", async () => {
    const cli = await import("../../cli.ts");
    assert.equal(typeof cli.main, "function");
  });
});
