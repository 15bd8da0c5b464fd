import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { GossipAuth, Guard, Limit } from "../../mod.ts";
import { MAX_BODY_BYTES, sidecarApp, type SidecarOptions } from "../../src/http/sidecar.ts";

const app = async (options: SidecarOptions = {}) =>
  sidecarApp(
    await Guard.builder().defaultLimit(Limit.perHour(2).burst(2)).class(
      "pro",
      Limit.perHour(3).burst(3),
    ).maxKeyLimits(2).spawn(),
    { defaultLimit: Limit.perHour(2).burst(2), ...options },
  );
const send = (method: string, body: unknown, headers: Record<string, string> = {}) => ({
  method,
  body: typeof body === "string" ? body : JSON.stringify(body),
  headers,
});
const post = (body: string) => ({
  method: "POST",
  body,
  headers: { "content-type": "application/json" },
});

describe("sidecar API", () => {
  it("checks keys, in classes and with a cost; a denial is a 200 too", async () => {
    const a = await app();
    const r1 = await a.request("/v1/check", post('{"key": "t"}'));
    assert.equal(r1.status, 200);
    assert.deepEqual(await r1.json(), {
      allowed: true,
      remaining: 1,
      retryAfterMs: 0,
      resetMs: 1_800_000,
    });
    assert.equal(
      (await (await a.request("/v1/check", post('{"key": "t", "cost": 1}'))).json()).allowed,
      true,
    );
    const denied = await a.request("/v1/check", post('{"key": "t"}'));
    assert.equal(denied.status, 200);
    const body = await denied.json();
    assert.equal(body.allowed, false);
    assert.ok(body.retryAfterMs > 0);
    assert.equal(
      (await (await a.request("/v1/check", post('{"key": "t", "class": "pro", "cost": 3}'))).json())
        .allowed,
      true,
    );
    const never = await (await a.request("/v1/check", post('{"key": "u", "cost": 9}'))).json();
    assert.deepEqual([never.allowed, never.retryAfterMs], [false, null]);
    const stats = await (await a.request("/v1/stats")).json();
    assert.deepEqual([stats.admitted, stats.denied], [3, 2]);
    assert.equal((await a.request("/healthz")).status, 200);
  });

  it("answers bad input with a problem naming the field, and changes nothing", async () => {
    const a = await app();
    const cases: Array<[string, number, string | undefined]> = [
      ["not json", 400, undefined],
      ["", 400, undefined],
      ["[1]", 400, undefined],
      ['{"key": 7}', 400, "/key"],
      ['{"key": ""}', 400, "/key"],
      ['{"key": "k", "class": 1}', 400, "/class"],
      ['{"key": "k", "cost": 0}', 400, "/cost"],
      ['{"key": "k", "cost": 1.5}', 400, "/cost"],
    ];
    for (const [body, status, field] of cases) {
      const res = await a.request("/v1/check", post(body));
      assert.equal(res.status, status, body);
      assert.equal(res.headers.get("content-type"), "application/problem+json");
      const problem = await res.json();
      assert.equal(problem.status, status);
      assert.equal(problem.field, field, body);
      assert.equal(typeof problem.detail, "string");
    }
    const big = await a.request(
      "/v1/check",
      post(JSON.stringify({ key: "k", pad: "x".repeat(MAX_BODY_BYTES) })),
    );
    assert.equal(big.status, 413);
    // A chunked body declares no length: it is read up to the bound only.
    const chunk = new TextEncoder().encode(" ".repeat(16 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 100) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const chunked = await a.request(
      new Request(
        "http://sidecar/v1/check",
        { method: "POST", body: stream, duplex: "half" } as RequestInit,
      ),
    );
    assert.equal(chunked.status, 413);
    assert.ok(sent < 10, `read ${sent} chunks of 16 KiB`);
    assert.equal((await a.request("/nowhere")).status, 404);
    const stats = await (await a.request("/v1/stats")).json();
    assert.deepEqual([stats.admitted, stats.denied, stats.trackedKeys], [0, 0, 0]);
  });
});

describe("sidecar API: batches and peeks", () => {
  it("checks a batch all or nothing, and peeks without consuming", async () => {
    const a = await app();
    const items = [{ key: "a" }, { key: "b", class: "pro", cost: 3 }];
    const ok = await (await a.request("/v1/check-all", post(JSON.stringify({ items })))).json();
    assert.equal(ok.allowed, true);
    assert.deepEqual(ok.decisions.map((d: { remaining: number }) => d.remaining), [1, 0]);
    const no = await (await a.request("/v1/check-all", post(JSON.stringify({ items })))).json();
    assert.deepEqual([no.allowed, no.decisions[0].allowed, no.decisions[1].allowed], [
      false,
      true,
      false,
    ]);
    // The denied batch consumed nothing: "a" still has one left, which the
    // next check would take (remaining 0 after it), as a peek tells twice.
    for (let i = 0; i < 2; i++) {
      const peek = await (await a.request("/v1/peek?key=a")).json();
      assert.deepEqual([peek.allowed, peek.remaining], [true, 0]);
    }
    assert.equal((await (await a.request("/v1/peek?class=pro&key=b")).json()).allowed, false);
  });

  it("names the item at fault in a bad batch or peek", async () => {
    const a = await app();
    const cases: Array<[string, string]> = [
      ['{"items": []}', "/items"],
      ['{"items": [{"key": "a"}, {"key": 3}]}', "/items/1/key"],
      ['{"items": [{"key": "a"}, {"key": "a", "class": ""}]}', "/items/1"],
      ['{"items": [{"key": "a", "cost": -1}]}', "/items/0/cost"],
    ];
    for (const [body, field] of cases) {
      const res = await a.request("/v1/check-all", post(body));
      assert.equal(res.status, 400, body);
      assert.equal((await res.json()).field, field, body);
    }
    // The guard refuses a pair twice, once; the sidecar names the item.
    const twice = await a.request(
      "/v1/check-all",
      post('{"items": [{"key": "a"}, {"key": "b"}, {"key": "a", "class": ""}]}'),
    );
    const problem = await twice.json();
    assert.deepEqual([twice.status, problem.detail, problem.field], [
      400,
      "the same class and key appear twice in one batch",
      "/items/2",
    ]);
    const res = await a.request("/v1/peek?class=pro");
    assert.deepEqual([res.status, (await res.json()).field], [400, "/query/key"]);
    const stats = await (await a.request("/v1/stats")).json();
    assert.deepEqual([stats.admitted, stats.denied], [0, 0]);
  });
});

describe("sidecar API: admin", () => {
  it("reads and changes classes, the default class included", async () => {
    const a = await app();
    const put = await a.request("/v1/classes?class=free", send("PUT", { limit: "10/s", burst: 2 }));
    assert.deepEqual(await put.json(), { class: "free", limit: "10/s", burst: 2 });
    await a.request("/v1/classes?class=", send("PUT", { limit: "1/min" }));
    const list = await (await a.request("/v1/classes")).json();
    assert.deepEqual(list.classes, [
      { class: "", limit: "1/min", burst: 1 },
      { class: "pro", limit: "3/h", burst: 3 },
      { class: "free", limit: "10/s", burst: 2 },
    ]);
    assert.equal((await a.request("/v1/classes?class=free", { method: "DELETE" })).status, 200);
    assert.equal((await a.request("/v1/classes?class=free", { method: "DELETE" })).status, 404);
    const all = await a.request(
      "/v1/classes",
      send("PUT", { classes: [{ class: "x", limit: "5/s" }, { class: "", limit: "7/s" }] }),
    );
    assert.deepEqual((await all.json()).classes.map((c: { class: string }) => c.class), ["", "x"]);
  });

  it("sets key limits, shadows and the dry run", async () => {
    const a = await app();
    await a.request("/v1/key-limits?class=pro&key=t:1", send("PUT", { limit: "5/s" }));
    await a.request("/v1/key-limits?key=t:2", send("PUT", { follows: "pro" }));
    assert.deepEqual((await (await a.request("/v1/key-limits")).json()).keyLimits, [
      { class: "pro", key: "t:1", limit: "5/s", burst: 1 },
      { class: "", key: "t:2", follows: "pro" },
    ]);
    const full = await a.request("/v1/key-limits?key=t:3", send("PUT", { limit: "5/s" }));
    assert.deepEqual([full.status, (await full.json()).code], [409, "TooManyKeyLimits"]);
    const del = await a.request("/v1/key-limits?class=pro&key=t:1", { method: "DELETE" });
    assert.equal(del.status, 200);
    const shadow = await a.request("/v1/shadows?class=pro", send("PUT", { limit: "1/h" }));
    assert.equal(shadow.status, 200);
    const unknown = await a.request("/v1/shadows?class=nope", send("PUT", { limit: "1/h" }));
    assert.deepEqual([unknown.status, (await unknown.json()).code], [404, "UnknownClass"]);
    assert.deepEqual((await (await a.request("/v1/shadows")).json()).shadows, [
      { class: "pro", limit: "1/h", burst: 1 },
    ]);
    await a.request("/v1/dry-run", send("PUT", { dryRun: true }));
    assert.deepEqual(await (await a.request("/v1/dry-run")).json(), { dryRun: true });
    for (let i = 0; i < 3; i++) await a.request("/v1/check", post('{"key": "d"}'));
    const stats = await (await a.request("/v1/stats")).json();
    assert.deepEqual([stats.admitted, stats.denied, stats.dryRun], [2, 1, true]);
  });

  it("refuses a malformed change whole, naming the field", async () => {
    const a = await app();
    const cases: Array<[string, string, unknown, string]> = [
      ["PUT", "/v1/classes?class=free", { limit: "ten" }, "/limit"],
      ["PUT", "/v1/classes?class=free", { limit: "1/s", burst: -1 }, "/burst"],
      // A burst the rate spends in under a microsecond, the time base's resolution.
      ["PUT", "/v1/classes?class=free", { limit: "2000000/s", burst: 1 }, "/burst"],
      [
        "PUT",
        "/v1/classes",
        { classes: [{ class: "a", limit: "1/s" }, { class: 2 }] },
        "/classes/1/class",
      ],
      [
        "PUT",
        "/v1/key-limits",
        { keyLimits: [{ key: "k", limit: "1/s" }, { key: "" }] },
        "/keyLimits/1/key",
      ],
      ["PUT", "/v1/key-limits?key=k", { limit: "1/s", follows: "pro" }, "/follows"],
      ["PUT", "/v1/shadows", { shadows: "no" }, "/shadows"],
      ["PUT", "/v1/dry-run", { dryRun: "yes" }, "/dryRun"],
      ["DELETE", "/v1/classes?class=", undefined, "/query/class"],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await a.request(path, {
        method,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      assert.equal(res.status, 400, path);
      assert.equal(res.headers.get("content-type"), "application/problem+json");
      assert.equal((await res.json()).field, field, path);
    }
    assert.equal((await (await a.request("/v1/classes")).json()).classes.length, 2);
    assert.deepEqual((await (await a.request("/v1/key-limits")).json()).keyLimits, []);
    assert.deepEqual(await (await a.request("/v1/dry-run")).json(), { dryRun: false });
  });

  it("needs the bearer token on admin routes only, when one is set", async () => {
    const a = await app({ adminToken: () => "s3cret" });
    const open = await a.request("/v1/classes");
    assert.equal(open.status, 401);
    assert.match(open.headers.get("www-authenticate") ?? "", /^Bearer/);
    const wrong = await a.request("/v1/stats", { headers: { authorization: "Bearer s3crex" } });
    assert.equal(wrong.status, 401);
    const put = await a.request(
      "/v1/dry-run",
      send("PUT", { dryRun: true }, { authorization: "Bearer s3cret" }),
    );
    assert.equal(put.status, 200);
    assert.equal((await a.request("/v1/check", post('{"key": "k"}'))).status, 200);
    assert.equal((await a.request("/readyz")).status, 200);
  });
});

describe("sidecar API: readiness", () => {
  it("a seed that never resolves: /readyz is a 503 that names it and its failed lookups", async () => {
    const guard = await Guard.builder().limit(10).bind("127.0.0.1:0").gossipAuth(GossipAuth.Off)
      .seeds(["nonexistent.invalid:7946"]).spawn();
    try {
      const a = sidecarApp(guard);
      // A .invalid name fails at once (RFC 6761); the wait is bounded all the same.
      const deadline = Date.now() + 20_000;
      let text = "";
      while (!/lookups? failed/.test(text) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const res = await a.request("/readyz");
        assert.equal(res.status, 503);
        text = await res.text();
      }
      assert.match(
        text,
        /^joining: seed nonexistent\.invalid:7946 has not resolved \(\d+ lookups? failed\)\n$/,
      );
      const stats = guard.stats();
      assert.match(stats.joinBlocked, /^joining: seed nonexistent\.invalid:7946 has not resolved/);
      assert.equal(stats.unresolvedSeeds[0].seed, "nonexistent.invalid:7946");
    } finally {
      await guard.leave();
    }
  });
});
