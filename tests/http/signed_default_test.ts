// Signed gossip unless the operator says otherwise: a guard or sidecar that
// binds gossip, seeds or none (the first of a fleet is the one the others
// join), starts only with a secret or with signing turned off in so many
// words; a standalone one needs neither.
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GossipAuth, Guard, Secret } from "../../mod.ts";
import { parseSidecarArgs, type SidecarConfig, UsageError } from "../../src/http/cli_args.ts";
import { start } from "../support/process.ts";
import { startSidecar } from "./support.ts";

const dir = mkdtempSync(join(tmpdir(), "rateguard-signed-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A file of one base64 gossip secret. */
function secretFile(): string {
  const path = join(dir, "gossip-secret");
  writeFileSync(path, `${btoa(String.fromCharCode(...new Uint8Array(32).fill(5)))}\n`);
  return path;
}

const config = (argv: string[], env: Record<string, string> = {}): SidecarConfig => {
  const p = parseSidecarArgs(argv, env);
  assert.equal(p.kind, "run");
  return p.kind === "run" ? p.config : undefined!;
};

/** The one line that names both ways out. */
const WAYS_OUT = /^--bind: .*--gossip-secret-file <path>.*--gossip-auth off/;

describe("a sidecar that binds gossip", () => {
  it("is refused without a secret or --gossip-auth off, seeds or none, in one line", () => {
    for (
      const argv of [
        ["--limit", "10", "--bind", "127.0.0.1:0", "--seeds", "127.0.0.1:7946"],
        ["--limit", "10", "--bind", "127.0.0.1:7946"],
      ]
    ) {
      assert.throws(() => parseSidecarArgs(argv, {}), (e) => {
        assert.ok(e instanceof UsageError, String(e));
        assert.match(e.message, WAYS_OUT);
        assert.ok(!e.message.includes("\n"), e.message);
        return true;
      });
    }
    // Where --bind came from is what the line names.
    assert.throws(
      () => parseSidecarArgs(["--limit", "10"], { RATEGUARD_BIND: "127.0.0.1:0" }),
      (e) => e instanceof UsageError && /^RATEGUARD_BIND: .*--gossip-auth off/.test(e.message),
    );
  });

  it("starts with --gossip-auth off said, from a flag or the environment", () => {
    const bind = ["--limit", "10", "--bind", "127.0.0.1:0", "--seeds", "127.0.0.1:7946"];
    assert.equal(config([...bind, "--gossip-auth", "off"]).gossipAuth, "off");
    assert.equal(config(bind, { RATEGUARD_GOSSIP_AUTH: "off" }).gossipAuth, "off");
  });

  it("signs with a secret file and no mode said: required", () => {
    const c = config(["--limit", "10", "--bind", "127.0.0.1:0", "--gossip-secret-file", "/s"]);
    assert.deepEqual([c.gossipAuth, c.gossipSecretFile], ["required", "/s"]);
    const rollout = config([
      "--limit",
      "10",
      "--bind",
      "127.0.0.1:0",
      "--gossip-secret-file",
      "/s",
      "--gossip-auth",
      "transitional",
    ]);
    assert.equal(rollout.gossipAuth, "transitional");
  });

  it("standalone, needs neither", () => {
    assert.equal(config(["--limit", "10"]).gossipAuth, "off");
  });

  it("as a process, exits 2 with that line when it has neither", async () => {
    const p = start("cli.ts", [
      "--limit",
      "10",
      "--http",
      "127.0.0.1:0",
      "--bind",
      "127.0.0.1:0",
      "--seeds",
      "127.0.0.1:7946",
    ]);
    try {
      assert.equal(await p.exited(), 2, p.stderr());
      const lines = p.stderr().trimEnd().split("\n");
      assert.equal(lines.length, 1, p.stderr());
      assert.match(
        lines[0],
        /^rateguard: --bind: .*--gossip-secret-file <path>.*--gossip-auth off/,
      );
    } finally {
      p.kill();
    }
  });

  it("as a process, runs as before with --gossip-auth off said", async () => {
    const first = await startSidecar(["--limit", "10", "--gossip-auth", "off"], { fleet: true });
    try {
      const second = await startSidecar(
        ["--limit", "10", "--gossip-auth", "off", "--seeds", first.gossip],
        { fleet: true },
      );
      try {
        const stats = await (await fetch(`${second.url}/v1/stats`)).json();
        assert.equal(stats.gossipAuth, "off");
      } finally {
        second.process.kill();
      }
    } finally {
      first.process.kill();
    }
  });

  it("as a process, signs with only a secret file given", async () => {
    const s = await startSidecar(["--limit", "10", "--gossip-secret-file", secretFile()], {
      fleet: true,
    });
    try {
      const stats = await (await fetch(`${s.url}/v1/stats`)).json();
      assert.equal(stats.gossipAuth, "required");
    } finally {
      s.process.kill();
    }
  });
});

describe("a guard that binds gossip", () => {
  it("is refused by spawn() without gossipAuth said, seeds or none, in one line", async () => {
    for (const seeds of [["127.0.0.1:7946"], []]) {
      await assert.rejects(
        Guard.builder().bind("127.0.0.1:0").seeds(seeds).limit(10).spawn(),
        (e) => {
          assert.ok(e instanceof RangeError, String(e));
          assert.match(e.message, /gossipAuth\(GossipAuth\.Required, \[secret\]\)/);
          assert.match(e.message, /gossipAuth\(GossipAuth\.Off\)/);
          assert.ok(!e.message.includes("\n"), e.message);
          return true;
        },
      );
    }
  });

  it("spawns with GossipAuth.Off said, or with a secret", async () => {
    const off = await Guard.builder().bind("127.0.0.1:0").gossipAuth(GossipAuth.Off).limit(10)
      .spawn();
    const secret = new Secret(new Uint8Array(32).fill(5));
    const signed = await Guard.builder().bind("127.0.0.1:0")
      .gossipAuth(GossipAuth.Required, [secret]).limit(10).spawn();
    try {
      assert.deepEqual([off.stats().gossipAuth, signed.stats().gossipAuth], ["off", "required"]);
    } finally {
      await off.leave();
      await signed.leave();
    }
  });

  it("standalone, needs neither", async () => {
    const guard = await Guard.builder().limit(10).spawn();
    assert.equal(guard.stats().gossipAuth, "off");
    await guard.leave();
  });
});
