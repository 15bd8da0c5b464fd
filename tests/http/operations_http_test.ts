import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Guard, Limit } from "../../mod.ts";
import { sidecarApp } from "../../src/http/sidecar.ts";
import { serveHttp } from "../../src/http/serve.ts";
import { Client } from "../../src/client/client.ts";

const post = (body: unknown) => ({
  method: "POST",
  body: typeof body === "string" ? body : JSON.stringify(body),
  headers: { "content-type": "application/json" },
});

describe("the sidecar's refund, reset and block", () => {
  it("answers each, in its class, and refuses bad bodies naming the field", async () => {
    const guard = await Guard.builder().defaultLimit(Limit.perHour(2).burst(2))
      .class("pro", Limit.perHour(1).burst(1)).spawn();
    const app = sidecarApp(guard);
    const ask = async (path: string, body: unknown) => {
      const res = await app.request(path, post(body));
      return { status: res.status, body: await res.json() };
    };
    const check = async (body: unknown) => (await ask("/v1/check", body)).body.allowed;
    await check({ key: "t" });
    await check({ key: "t" });
    assert.equal(await check({ key: "t" }), false);
    assert.deepEqual(await ask("/v1/refund", { key: "t", cost: 1 }), {
      status: 200,
      body: { refunded: true },
    });
    assert.equal(await check({ key: "t" }), true);
    assert.deepEqual((await ask("/v1/reset", { key: "t" })).body, { reset: true });
    assert.deepEqual((await ask("/v1/reset", { key: "t", class: "pro" })).body, { reset: false });
    assert.deepEqual((await ask("/v1/block", { key: "t", ms: 60_000 })).body, { blocked: true });
    const denied = (await ask("/v1/check", { key: "t" })).body;
    assert.equal(denied.allowed, false);
    assert(denied.retryAfterMs >= 60_000);
    const keys = await (await app.request("/v1/keys?class=&key=t")).json();
    assert(keys.blockedForMs > 59_000, "the block shows in the key's stats");
    for (
      const [path, body, field] of [
        ["/v1/block", { key: "t" }, "/ms"],
        ["/v1/block", { key: "t", ms: -5 }, "/ms"],
        ["/v1/block", { key: "t", ms: "60s" }, "/ms"],
        ["/v1/refund", { key: "t", cost: 0 }, "/cost"],
        ["/v1/reset", { key: "" }, "/key"],
        ["/v1/refund", "[]", ""],
      ] as const
    ) {
      const res = await ask(path, body);
      assert.equal(res.status, 400, `${path} ${JSON.stringify(body)}`);
      assert.equal(res.body.field ?? "", field, `${path} ${JSON.stringify(body)}`);
    }
    assert.equal(guard.keyStats("t")!.blockedForMs > 59_000, true, "bad bodies changed nothing");
    for (const path of ["/v1/refund", "/v1/reset", "/v1/block"]) {
      const wrong = await app.request(path);
      assert.equal(wrong.status, 405, path);
      assert.equal(wrong.headers.get("allow"), "POST", path);
    }
  });

  it("is what the TypeScript client's refund, reset and block call, over a real socket", async () => {
    const guard = await Guard.builder().defaultLimit(Limit.perHour(1).burst(1)).spawn();
    const server = await serveHttp(sidecarApp(guard).fetch, { hostname: "127.0.0.1", port: 0 });
    try {
      // A generous timeout: the machine running the suite is shared and busy.
      const client = new Client({ url: `http://${server.address}`, timeoutMs: 5_000 });
      assert((await client.check("k")).allowed);
      assert.equal(await client.refund("k"), true);
      assert((await client.check("k")).allowed);
      assert.equal(await client.reset("k"), true);
      assert.equal(await client.block("k", 30_000), true);
      assert.equal((await client.check("k")).allowed, false);
      assert.equal(guard.keyStats("k")!.blockedForMs > 29_000, true);
      assert.equal(await client.reset("k"), true);
      assert((await client.check("k")).allowed);
      await assert.rejects(() => client.block("k", 0), RangeError);
      await assert.rejects(() => client.refund(""), TypeError);
    } finally {
      await server.close();
    }
  });

  it("is waited on by the TypeScript client's acquire, which a failure ends", async () => {
    const guard = await Guard.builder().defaultLimit(Limit.perSecond(1_000).burst(1))
      .class("slow", Limit.perHour(1).burst(1)).spawn();
    const server = await serveHttp(sidecarApp(guard).fetch, { hostname: "127.0.0.1", port: 0 });
    try {
      const client = new Client({ url: `http://${server.address}`, timeoutMs: 5_000 });
      await client.check("k");
      assert.equal((await client.acquire("k", { maxWaitMs: 5_000 })).allowed, true);
      await client.check("k", { class: "slow" });
      const denied = await client.acquire("k", { class: "slow", maxWaitMs: 1_000 });
      assert.equal(denied.allowed, false, "an hour's wait does not fit in a second");
      const controller = new AbortController();
      controller.abort(new Error("gone"));
      await assert.rejects(() => client.acquire("k", { signal: controller.signal }), /gone/);
    } finally {
      await server.close();
    }
    // A sidecar that cannot be asked: the failure policy's denial ends the wait at once.
    const down = new Client({ url: "http://127.0.0.1:9", onFailure: "closed", timeoutMs: 1_000 });
    const failed = await down.acquire("k", { maxWaitMs: 60_000 });
    assert.equal(failed.allowed, false);
    assert.ok(failed.failure !== undefined);
  });
});
