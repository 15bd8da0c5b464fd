import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { messageOf } from "../../src/core/errors.ts";

describe("messageOf", () => {
  it("reports any thrown value sensibly, never as undefined", () => {
    assert.equal(messageOf(new RangeError("out of range")), "out of range");
    assert.equal(messageOf("a plain string"), "a plain string");
    assert.equal(messageOf(42), "a thrown number: 42");
    assert.equal(messageOf(undefined), "a thrown undefined");
    assert.equal(messageOf(null), "a thrown null");
    assert.equal(messageOf({ code: "EPERM" }), 'a thrown object: {"code":"EPERM"}');
    assert.equal(messageOf(Symbol("s")), "a thrown symbol: Symbol(s)");
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.equal(messageOf(cyclic), "a thrown object: [object Object]");
    assert.equal(messageOf(new Error("")), "Error");
    assert.equal(messageOf({ message: "error-like" }), "error-like");
  });
});
