// Class names and query strings are held to the rules bodies are held to:
// a class name is at most maxKeyBytes bytes of UTF-8 wherever a class is
// made (else it could be made and never used: check refuses it), and a
// query that is not UTF-8 once percent-decoded is a 400 naming the
// parameter, never a lossy decode into U+FFFD.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Guard, Limit } from "../../mod.ts";
import { sidecarApp } from "../../src/http/sidecar.ts";

const LONG = "c".repeat(1_025);
const TOO_LONG = /class name is at most 1024 bytes of UTF-8 \(maxKeyBytes\), got 1025/;

describe("a class name longer than maxKeyBytes", () => {
  it("is refused by every method that makes a class or its shadow", async () => {
    const guard = await Guard.builder().limit(10).class("pro", Limit.perSecond(5)).spawn();
    assert.throws(() => guard.setClass(LONG, Limit.perSecond(1)), {
      name: "RangeError",
      message: TOO_LONG,
    });
    assert.throws(() => guard.setClasses([[LONG, Limit.perSecond(1)]]), RangeError);
    assert.throws(() => guard.setShadow(LONG, Limit.perSecond(1)), RangeError);
    assert.deepEqual(guard.classes().map(([name]) => name), ["pro"], "nothing changed");
    await guard.leave();
  });

  it("is refused by the builder, at the latest when it spawns", async () => {
    await assert.rejects(
      Guard.builder().limit(10).class(LONG, Limit.perSecond(1)).spawn(),
      { name: "RangeError", message: TOO_LONG },
    );
    // maxKeyBytes may come after the class: the bound is the one the guard is built with.
    const wide = await Guard.builder().limit(10).class(LONG, Limit.perSecond(1)).maxKeyBytes(2_048)
      .spawn();
    assert.equal(wide.check("k", { class: LONG }).allowed, true);
    await wide.leave();
  });

  it("is a 400 from PUT /v1/classes, by the query and in a table", async () => {
    const guard = await Guard.builder().limit(10).spawn();
    const app = sidecarApp(guard);
    const one = await app.request(`/v1/classes?class=${LONG}`, {
      method: "PUT",
      body: '{"limit": "5/s"}',
    });
    assert.equal(one.status, 400);
    assert.match((await one.json()).detail, TOO_LONG);
    const table = await app.request("/v1/classes", {
      method: "PUT",
      body: JSON.stringify({ classes: [{ class: LONG, limit: "5/s" }] }),
    });
    assert.equal(table.status, 400);
    assert.deepEqual(guard.classes(), []);
    await guard.leave();
  });
});

describe("a query that is not UTF-8", () => {
  const cases: Array<[string, string, string]> = [
    ["GET", "/v1/peek?key=%FF", "key"],
    ["GET", "/v1/peek?key=a&class=%C3", "class"],
    ["GET", "/v1/peek?key=%E2%82", "key"],
    ["GET", "/v1/keys?key=%FF", "key"],
    ["GET", "/v1/classes?class=%FF", "class"],
    ["PUT", "/v1/classes?class=%FF", "class"],
    ["DELETE", "/v1/classes?class=%FF", "class"],
    ["PUT", "/v1/shadows?class=%FF", "class"],
    ["DELETE", "/v1/key-limits?key=%ED%A0%80", "key"],
    ["GET", "/v1/key-limits?key=ok&class=a%FFb", "class"],
  ];
  for (const [method, path, name] of cases) {
    it(`${method} ${path} is a 400 naming ${name}`, async () => {
      const guard = await Guard.builder().limit(10).spawn();
      const res = await sidecarApp(guard).request(path, {
        method,
        ...(method === "PUT" ? { body: '{"limit": "5/s"}' } : {}),
      });
      assert.equal(res.status, 400);
      assert.match(res.headers.get("content-type") ?? "", /application\/problem\+json/);
      const problem = await res.json();
      assert.equal(problem.field, `/query/${name}`);
      assert.match(problem.detail, new RegExp(`query parameter ${name} is not UTF-8`));
      assert.equal(guard.stats().trackedKeys, 0);
      await guard.leave();
    });
  }

  it("while valid escapes, a literal % and + still mean what they meant", async () => {
    const guard = await Guard.builder().limit(10).spawn();
    const app = sidecarApp(guard);
    // Each query names the key the guard holds state for: /v1/keys finds it.
    for (const [query, key] of [["%C3%A9t%C3%A9", "été"], ["100%", "100%"], ["a+b", "a b"]]) {
      guard.check(key);
      assert.equal((await app.request(`/v1/keys?key=${query}`)).status, 200, query);
      assert.equal((await app.request(`/v1/peek?key=${query}`)).status, 200, query);
    }
    await guard.leave();
  });
});
