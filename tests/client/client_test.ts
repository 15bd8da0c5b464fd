import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server, type Socket } from "node:net";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Client,
  ClientError,
  ClientUnavailableError,
  OperationalError,
} from "../../src/client/mod.ts";
import { Limit } from "../../mod.ts";
import { Hono } from "hono";
import { rateLimit } from "../../src/http/hono.ts";
import { postJson, type Sidecar, startSidecar } from "../http/support.ts";
import { start } from "../support/process.ts";

describe("TypeScript client", () => {
  let sidecar: Sidecar;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "rateguard-client-"));
    writeFileSync(join(dir, "token"), "adm1n\n");
    sidecar = await startSidecar([
      "--limit",
      "2/h",
      "--burst",
      "2",
      "--class",
      "pro=3/h",
      "--admin-token-file",
      join(dir, "token"),
    ]);
  });
  after(() => {
    sidecar?.process.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it("checks, in classes, in batches, and peeks", async () => {
    const client = new Client({ url: sidecar.url, timeoutMs: 2_000 });
    const d = await Promise.all([1, 2, 3].map(() => client.check("tenant:1")));
    assert.deepEqual(d.map((x) => x.allowed).sort(), [false, true, true]);
    assert.equal((await client.check("tenant:1", { class: "pro" })).allowed, true);
    const never = await client.check("tenant:2", { cost: 5 });
    assert.deepEqual([never.allowed, never.retryAfterMs], [false, Infinity]);
    const batch = await client.checkAll([{ key: "a" }, { key: "b", class: "pro" }]);
    assert.deepEqual([batch.allowed, batch.decisions.length], [true, 2]);
    assert.equal((await client.peek("a")).allowed, true);
    assert.equal((await client.check("b", { class: "pro", cost: 1 })).allowed, false);
    await assert.rejects(
      client.check("k", { cost: 0 }),
      (e) => e instanceof ClientError && e.status === 400 && e.problem.field === "/cost",
    );
    assert.throws(() => new Client({ url: "127.0.0.1:7947" }), TypeError);
    assert.throws(() => new Client({ timeoutMs: 0 }), RangeError);
  });

  it("makes admin calls with the token", async () => {
    const admin = new Client({ url: sidecar.url, adminToken: "adm1n" });
    await admin.setClass("free", "10/s");
    await admin.setClass("gold", Limit.perMinute(600).burst(20));
    assert.deepEqual((await admin.classes()).map((c) => `${c.class}=${c.limit}/${c.burst}`), [
      "=2/h/2",
      "pro=3/h/1",
      "free=10/s/1",
      "gold=600/min/20",
    ]);
    await admin.setKeyLimit("t:1", { limit: "5/s", burst: 2 }, { class: "pro" });
    await admin.setKeyLimit("t:1", { follows: "gold" });
    assert.deepEqual(await admin.keyLimits(), [
      { class: "pro", key: "t:1", limit: "5/s", burst: 2 },
      { class: "", key: "t:1", follows: "gold" },
    ]);
    assert.equal(await admin.removeKeyLimit("t:1", { class: "pro" }), true);
    assert.equal(await admin.removeKeyLimit("t:1", { class: "pro" }), false);
    await admin.setShadow("free", "1/s");
    assert.deepEqual(await admin.shadows(), [{ class: "free", limit: "1/s", burst: 1 }]);
    await admin.setShadow("free", null);
    assert.equal(await admin.removeClass("gold"), true);
    await admin.setDryRun(true);
    assert.equal(await admin.dryRun(), true);
    await admin.setDryRun(false);
    assert.equal((await admin.stats()).dryRun, false);
    assert.equal(await admin.ready(), true);
    await assert.rejects(
      new Client({ url: sidecar.url }).classes(),
      (e) => e instanceof ClientError && e.status === 401,
    );
  });

  it("serves as the limiter of the Hono middleware", async () => {
    const client = new Client({ url: sidecar.url, timeoutMs: 2_000 });
    const app = new Hono();
    app.use(rateLimit({ guard: client, key: () => ({ key: "via-hono", class: "pro" }) }));
    app.get("/", (c) => c.text("ok"));
    const statuses: number[] = [];
    for (let i = 0; i < 2; i++) statuses.push((await app.request("/")).status);
    assert.deepEqual(statuses, [200, 429]);
  });
});

describe("TypeScript client, when the sidecar cannot answer", () => {
  it("admits (open), denies (closed) or throws, as chosen", async () => {
    // One port that accepts and never answers, one that refuses.
    const sockets: Socket[] = [];
    const silent: Server = createServer((s) => void sockets.push(s));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const refusing: Server = createServer();
    await new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", resolve));
    const port = (s: Server) => (s.address() as { port: number }).port;
    const refusingPort = port(refusing);
    await new Promise<void>((resolve) => refusing.close(() => resolve()));
    try {
      for (const [p, code] of [[port(silent), "Timeout"], [refusingPort, "Unreachable"]] as const) {
        const url = `http://127.0.0.1:${p}`;
        const open = await new Client({ url, timeoutMs: 50 }).check("k");
        assert.equal(open.allowed, true);
        // An operational failure says so by its class and code, never as a
        // TypeError (the class of a caller's mistake) from fetch.
        assert.ok(open.failure instanceof ClientUnavailableError, String(open.failure));
        assert.ok(open.failure instanceof OperationalError);
        assert.equal(open.failure.code, code);
        const closed = await new Client({ url, timeoutMs: 50, onFailure: "closed" }).check("k");
        assert.deepEqual([closed.allowed, closed.retryAfterMs], [false, 1_000]);
        const batch = await new Client({ url, onFailure: "closed" }).checkAll([{ key: "a" }]);
        assert.deepEqual(batch.decisions.map((d) => d.allowed), [false]);
        await assert.rejects(
          new Client({ url, timeoutMs: 50, onFailure: "throw" }).peek("k"),
          (e) => e instanceof ClientUnavailableError && e.code === code && e.cause !== undefined,
        );
        await assert.rejects(
          new Client({ url, adminTimeoutMs: 50 }).classes(),
          (e) => e instanceof ClientUnavailableError && e.code === code,
        );
      }
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

describe("TypeScript client: the first check", () => {
  it("is not timed out by setting up the connection", async (t) => {
    // On Node the first fetch of a process loads its HTTP parser, about 50 ms:
    // as long as a check's default timeout, so the first check failed open.
    const sidecar = await startSidecar(["--limit", "1000/s"]);
    try {
      // The sidecar's own first check (its code's first run) is not what is tested here.
      for (let i = 0; i < 3; i++) await postJson(`${sidecar.url}/v1/check`, { key: "warm" });
      const runs: string[] = [];
      // A fresh process each run, as that cost is paid once a process. A run
      // where the checks after the first take half the timeout says nothing
      // of the first (the machine is too busy), and is tried again.
      for (let i = 0; i < 3; i++) {
        const p = start("tests/support/first_check.ts", [sidecar.url]);
        try {
          const line = await p.waitFor(/^\{.*\}$/m, 30_000);
          const { firstError, medianMs } = JSON.parse(line[0]);
          runs.push(`${firstError ?? "answered"}, then ${medianMs.toFixed(1)} ms`);
          await p.exited(30_000);
          if (medianMs >= 25) continue;
          assert.equal(firstError, null, runs.join("; "));
          return;
        } finally {
          p.kill();
        }
      }
      // Shown as skipped in the totals, not passed, and not failed for a busy machine.
      t.skip(`too busy to tell: ${runs.join("; ")}`);
    } finally {
      sidecar.process.kill();
    }
  });
});
