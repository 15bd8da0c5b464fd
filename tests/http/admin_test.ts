import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Guard, Limit } from "../../mod.ts";
import { sidecarApp } from "../../src/http/sidecar.ts";
import { ADMIN_PATHS } from "../../src/http/admin.ts";

const app = async () =>
  sidecarApp(
    await Guard.builder().limit(100).class("pro", Limit.perSecond(50)).class(
      "free",
      Limit.perSecond(5),
    ).spawn(),
    { defaultLimit: Limit.perSecond(100) },
  );
const put = (body: unknown) => ({ method: "PUT", body: JSON.stringify(body) });
const json = async (res: Response) => [res.status, await res.json()] as const;

describe("admin routes never replace a whole table by accident", () => {
  it("refuses a body for one item sent without the query that names it", async () => {
    const a = await app();
    await a.request("/v1/key-limits?class=pro&key=t:1", put({ limit: "5/s" }));
    await a.request("/v1/shadows?class=pro", put({ limit: "1/s" }));
    const cases: Array<[string, unknown, string]> = [
      ["/v1/key-limits?class=pro", { limit: "10/s" }, "/query/key"],
      ["/v1/key-limits", { limit: "10/s" }, "/query/key"],
      ["/v1/key-limits", { follows: "pro" }, "/query/key"],
      ["/v1/classes", { limit: "10/s" }, "/query/class"],
      ["/v1/shadows", { limit: "10/s" }, "/query/class"],
    ];
    for (const [path, body, field] of cases) {
      const [status, problem] = await json(await a.request(path, put(body)));
      assert.deepEqual([status, problem.field], [400, field], path);
      assert.doesNotMatch(problem.detail, /must be an array/, path);
    }
    // Nothing changed.
    assert.equal((await (await a.request("/v1/key-limits")).json()).keyLimits.length, 1);
    assert.equal((await (await a.request("/v1/shadows")).json()).shadows.length, 1);
    assert.equal((await (await a.request("/v1/classes")).json()).classes.length, 3);
  });

  it("refuses an item given twice in a bulk body, changing nothing", async () => {
    const a = await app();
    const cases: Array<[string, unknown, string]> = [
      [
        "/v1/classes",
        { classes: [{ class: "a", limit: "1/s" }, { class: "a", limit: "2/s" }] },
        "/classes/1",
      ],
      [
        "/v1/shadows",
        { shadows: [{ class: "pro", limit: "1/s" }, { class: "pro", limit: "2/s" }] },
        "/shadows/1",
      ],
      [
        "/v1/key-limits",
        {
          keyLimits: [
            { class: "pro", key: "k", limit: "1/s" },
            { key: "k", limit: "1/s" },
            { class: "pro", key: "k", limit: "2/s" },
          ],
        },
        "/keyLimits/2",
      ],
    ];
    for (const [path, body, field] of cases) {
      const [status, problem] = await json(await a.request(path, put(body)));
      assert.deepEqual([status, problem.field], [400, field], path);
    }
    assert.equal((await (await a.request("/v1/classes")).json()).classes.length, 3);
    assert.deepEqual((await (await a.request("/v1/key-limits")).json()).keyLimits, []);
  });

  it("answers a key limit in, or following, a class this instance lacks with 404 UnknownClass", async () => {
    const a = await app();
    const cases: Array<[string, unknown]> = [
      ["/v1/key-limits?class=gold&key=k", { limit: "1/s" }],
      ["/v1/key-limits?key=k", { follows: "gold" }],
      ["/v1/key-limits", { keyLimits: [{ class: "gold", key: "k", limit: "1/s" }] }],
      ["/v1/key-limits", { keyLimits: [{ key: "k", follows: "gold" }] }],
    ];
    for (const [path, body] of cases) {
      const [status, problem] = await json(await a.request(path, put(body)));
      assert.deepEqual([status, problem.code], [404, "UnknownClass"], path);
    }
    assert.deepEqual((await (await a.request("/v1/key-limits")).json()).keyLimits, []);
    const ok = await a.request("/v1/key-limits?key=k", put({ follows: "free" }));
    assert.equal(ok.status, 200);
  });

  it("filters listings by ?class= (and key limits by ?key=)", async () => {
    const a = await app();
    await a.request("/v1/key-limits?class=pro&key=t:1", put({ limit: "5/s" }));
    await a.request("/v1/key-limits?class=pro&key=t:2", put({ limit: "6/s" }));
    await a.request("/v1/key-limits?key=t:1", put({ follows: "pro" }));
    await a.request("/v1/shadows?class=free", put({ limit: "1/s" }));
    const keys = async (q: string) =>
      (await (await a.request(`/v1/key-limits${q}`)).json()).keyLimits.map(
        (e: { class: string; key: string }) => `${e.class}/${e.key}`,
      );
    assert.deepEqual(await keys("?class=pro"), ["pro/t:1", "pro/t:2"]);
    assert.deepEqual(await keys("?class="), ["/t:1"]);
    assert.deepEqual(await keys("?class=pro&key=t:2"), ["pro/t:2"]);
    assert.deepEqual(await keys(""), ["pro/t:1", "pro/t:2", "/t:1"]);
    const classes = (await (await a.request("/v1/classes?class=free")).json()).classes;
    assert.deepEqual(classes, [{ class: "free", limit: "5/s", burst: 1 }]);
    assert.deepEqual((await (await a.request("/v1/shadows?class=pro")).json()).shadows, []);
  });

  it("answers a wrong method with 405 and Allow, from the one route table", async () => {
    const a = await app();
    const cases: Array<[string, string, string]> = [
      ["POST", "/v1/classes", "GET, PUT, DELETE, HEAD"],
      ["GET", "/v1/check", "POST"],
      ["DELETE", "/v1/dry-run", "GET, PUT, HEAD"],
      ["PUT", "/healthz", "GET, HEAD"],
    ];
    for (const [method, path, allow] of cases) {
      const res = await a.request(path, { method, body: method === "GET" ? undefined : "{}" });
      assert.equal(res.status, 405, `${method} ${path}`);
      assert.equal(res.headers.get("allow"), allow, `${method} ${path}`);
      assert.equal(res.headers.get("content-type"), "application/problem+json");
    }
    assert.equal((await a.request("/v1/nothing")).status, 404);
  });

  it("takes the admin token on every admin route, never the ops token", async () => {
    const a = sidecarApp(await Guard.builder().limit(100).spawn(), {
      adminToken: () => "adm1n",
      opsToken: () => "0ps",
    });
    const get = (path: string, token?: string) =>
      a.request(path, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
    for (const path of ADMIN_PATHS) {
      const at = path === "/v1/keys" ? `${path}?key=k` : path;
      assert.equal((await get(at)).status, 401, `${path}, no token`);
      assert.equal((await get(at, "0ps")).status, 401, `${path}, the ops token`);
      assert.notEqual((await get(at, "adm1n")).status, 401, `${path}, the admin token`);
    }
    for (const path of ["/healthz", "/readyz", "/v1/peek?key=k"]) {
      assert.equal((await get(path)).status, 200, `${path} takes no token`);
    }
  });
});

describe("a limit has one JSON form, the admin API's", () => {
  it("takes JSON.stringify(limit) as a body and sends the same JSON back", async () => {
    const a = await app();
    const limit = Limit.perMinute(1_000).burst(40);
    assert.deepEqual(JSON.parse(JSON.stringify(limit)), { limit: "1000/min", burst: 40 });
    const [status, body] = await json(await a.request("/v1/classes?class=team", put(limit)));
    assert.deepEqual([status, body], [200, { class: "team", ...limit.toJSON() }]);
    const { classes } = await (await a.request("/v1/classes?class=team")).json();
    assert.deepEqual(classes, [{ class: "team", ...limit.toJSON() }]);
  });

  it("takes a window of any length, Limit.per's, and refuses a period out of range", async () => {
    const a = await app();
    const quarter = Limit.per(100, 15 * 60_000).burst(100);
    assert.deepEqual(quarter.toJSON(), { limit: "100/15min", burst: 100 });
    const [status, body] = await json(await a.request("/v1/classes?class=q", put(quarter)));
    assert.deepEqual([status, body], [200, { class: "q", ...quarter.toJSON() }]);
    const [daily] = await json(await a.request("/v1/classes?class=d", put({ limit: "10000/day" })));
    assert.equal(daily, 200);
    const { classes } = await (await a.request("/v1/classes?class=d")).json();
    assert.deepEqual(classes, [{ class: "d", limit: "10000/d", burst: 500 }]);
    const [bad, problem] = await json(
      await a.request("/v1/classes?class=x", put({ limit: "1/400d" })),
    );
    assert.deepEqual([bad, problem.field], [400, "/limit"]);
    assert.match(problem.detail, /366 days/);
  });
});
