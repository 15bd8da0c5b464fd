import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Guard, Limit } from "../../mod.ts";
import { sidecarApp } from "../../src/http/sidecar.ts";
import { serveHttp } from "../../src/http/serve.ts";
import { Client } from "../../src/client/client.ts";
import { ClientError } from "../../src/client/errors.ts";
import { MAX_OPERATOR_BLOCKS } from "../../src/http/operations.ts";

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

describe("who may call refund, reset and block", () => {
  const OPS = ["/v1/refund", "/v1/reset", "/v1/block"] as const;
  const body = { key: "k", ms: 60_000 };
  const asking =
    (app: { request: (p: string, i: RequestInit) => Response | Promise<Response> }) =>
    async (path: string, token?: string, b: unknown = body) => {
      const { headers, ...init } = post(b);
      const auth: Record<string, string> = token === undefined
        ? {}
        : { authorization: `Bearer ${token}` };
      const res = await app.request(path, { ...init, headers: { ...headers, ...auth } });
      return {
        status: res.status,
        body: await res.json(),
        auth: res.headers.get("www-authenticate"),
      };
    };
  const spawn = () => Guard.builder().defaultLimit(Limit.perHour(10).burst(10)).spawn();

  it("with no token, anyone: they are open as every route is", async () => {
    const ask = asking(sidecarApp(await spawn()));
    for (const path of OPS) assert.equal((await ask(path)).status, 200, path);
  });

  it("with only the admin token, the admin token, unless the operator opens them", async () => {
    const ask = asking(sidecarApp(await spawn(), { adminToken: () => "adm1n" }));
    for (const path of OPS) {
      const none = await ask(path);
      assert.equal(none.status, 401, path);
      assert.match(none.body.detail, /admin token>, or --ops-open/, path);
      assert.match(none.auth ?? "", /^Bearer/, path);
      assert.equal((await ask(path, "adm1x")).status, 401, `${path}, a wrong token`);
      assert.equal((await ask(path, "adm1n")).status, 200, path);
    }
    const open = asking(sidecarApp(await spawn(), { adminToken: () => "adm1n", opsOpen: true }));
    for (const path of OPS) assert.equal((await open(path)).status, 200, `${path}, --ops-open`);
  });

  it("with the ops token, it or the admin token; the ops token opens no admin route", async () => {
    const guard = await spawn();
    const app = sidecarApp(guard, { adminToken: () => "adm1n", opsToken: () => "0ps" });
    const ask = asking(app);
    for (const path of OPS) {
      const none = await ask(path);
      assert.equal(none.status, 401, path);
      assert.match(none.body.detail, /ops token> \(or the admin token\)/, path);
      assert.equal((await ask(path, "0px")).status, 401, `${path}, a wrong token`);
      assert.equal((await ask(path, "0ps")).status, 200, `${path}, the ops token`);
      assert.equal((await ask(path, "adm1n")).status, 200, `${path}, the admin token`);
    }
    const ops = { headers: { authorization: "Bearer 0ps" } };
    for (const path of ["/v1/stats", "/v1/classes", "/v1/keys?key=k"]) {
      assert.equal((await app.request(path, ops)).status, 401, path);
    }
    // An ops token and no admin token: the operations need the ops token.
    const alone = asking(sidecarApp(guard, { opsToken: () => "0ps" }));
    assert.equal((await alone("/v1/block")).status, 401);
    assert.equal((await alone("/v1/block", "0ps")).status, 200);
  });

  it("a refused call changes nothing, and its body is not read", async () => {
    const guard = await spawn();
    const ask = asking(sidecarApp(guard, { adminToken: () => "adm1n" }));
    assert.equal((await ask("/v1/block", undefined, "not json")).status, 401);
    assert.equal((await ask("/v1/block")).status, 401);
    assert.equal(guard.keyStats("k"), undefined, "no block, not even a key's state");
  });

  it("a service's reset does not lift the operator's block; the operator's does", async () => {
    for (const tokens of [{ opsToken: () => "0ps" }, { opsOpen: true }]) {
      const guard = await spawn();
      const ask = asking(sidecarApp(guard, { adminToken: () => "adm1n", ...tokens }));
      const service = "opsToken" in tokens ? "0ps" : undefined;
      assert.deepEqual((await ask("/v1/block", "adm1n")).body, { blocked: true });
      const refused = await ask("/v1/reset", service);
      assert.equal(refused.status, 409);
      assert.equal(refused.body.code, "OperatorBlock");
      assert.match(refused.body.detail, /blocked by the operator for \d+ ms more/);
      assert(guard.keyStats("k")!.blockedForMs > 59_000, "still blocked");
      // A service's block of it, or a refund, lifts nothing either.
      assert.equal((await ask("/v1/block", service, { key: "k", ms: 1 })).status, 200);
      assert.equal((await ask("/v1/refund", service)).body.refunded, false);
      assert.equal((await ask("/v1/reset", service)).status, 409);
      assert.deepEqual((await ask("/v1/reset", "adm1n")).body, { reset: true });
      assert.equal(guard.keyStats("k")!.blockedForMs, 0);
      // Lifted by the operator, the key's next block is whoever makes it.
      assert.equal((await ask("/v1/block", service)).status, 200);
      assert.deepEqual((await ask("/v1/reset", service)).body, { reset: true });
      assert.equal(guard.keyStats("k")!.blockedForMs, 0, "a service lifts a service's block");
    }
  });

  it("keeps the operator's blocks in a table of MAX_OPERATOR_BLOCKS, and says when it is full", async () => {
    const guard = await Guard.builder().limit(10).trackedKeys(4 * MAX_OPERATOR_BLOCKS).spawn();
    const ask = asking(sidecarApp(guard, { adminToken: () => "adm1n" }));
    for (let i = 0; i < MAX_OPERATOR_BLOCKS; i++) {
      assert.equal((await ask("/v1/block", "adm1n", { key: `k${i}`, ms: 60_000 })).status, 200);
    }
    const full = await ask("/v1/block", "adm1n", { key: "one-more", ms: 60_000 });
    assert.equal(full.status, 409);
    assert.equal(full.body.code, "TooManyOperatorBlocks");
    assert.equal(guard.keyStats("one-more"), undefined, "refused, not blocked unmarked");
    assert.equal((await ask("/v1/block", "adm1n", { key: "k0", ms: 90_000 })).status, 200);
    assert.equal((await ask("/v1/reset", "adm1n", { key: "k1" })).status, 200);
    assert.equal((await ask("/v1/block", "adm1n", { key: "one-more", ms: 60_000 })).status, 200);
  });

  it("the TypeScript client sends the ops token on the operations, else its admin token", async () => {
    const guard = await spawn();
    const app = sidecarApp(guard, { adminToken: () => "adm1n", opsToken: () => "0ps" });
    const server = await serveHttp(app.fetch, { hostname: "127.0.0.1", port: 0 });
    try {
      const url = `http://${server.address}`;
      const client = (tokens: { adminToken?: string; opsToken?: string }) =>
        new Client({ url, timeoutMs: 5_000, ...tokens });
      const none = client({});
      await assert.rejects(
        () => none.block("k", 60_000),
        (e) => e instanceof ClientError && e.status === 401,
      );
      const service = client({ opsToken: "0ps" });
      assert.equal(await service.block("k", 60_000), true);
      assert.equal(await service.refund("k"), false);
      assert.equal(await service.reset("k"), true, "a service lifts a service's block");
      await assert.rejects(
        () => service.classes(),
        (e) => e instanceof ClientError && e.status === 401,
      );
      const operator = client({ adminToken: "adm1n" });
      assert.equal(await operator.block("k", 60_000), true);
      await assert.rejects(
        () => service.reset("k"),
        (e) => e instanceof ClientError && e.status === 409 && e.problem.code === "OperatorBlock",
      );
      // Both tokens: the ops token on the operations, the admin token on the admin calls.
      const both = client({ adminToken: "adm1n", opsToken: "0ps" });
      await assert.rejects(
        () => both.reset("k"),
        (e) => e instanceof ClientError && e.status === 409,
      );
      assert.equal((await both.classes()).length, 0);
      assert.equal(await operator.reset("k"), true);
      assert.equal(guard.keyStats("k")!.blockedForMs, 0);
    } finally {
      await server.close();
    }
  });
});
