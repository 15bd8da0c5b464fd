import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Guard, Limit } from "../../mod.ts";
import { MAX_BODY_BYTES, sidecarApp } from "../../src/http/sidecar.ts";

const app = async () =>
  sidecarApp(
    await Guard.builder().defaultLimit(Limit.perHour(2).burst(2)).class(
      "pro",
      Limit.perHour(3).burst(3),
    ).spawn(),
  );
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
    assert.equal((await a.request("/nowhere")).status, 404);
    const stats = await (await a.request("/v1/stats")).json();
    assert.deepEqual([stats.admitted, stats.denied, stats.trackedKeys], [0, 0, 0]);
  });
});
