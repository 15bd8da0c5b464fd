// draft-10's RateLimit value is made once for the last (policy, remaining,
// reset) and handed out again: a change in any one of them makes it anew.
import { it } from "node:test";
import assert from "node:assert/strict";
import { Decision, Limit } from "../../mod.ts";
import { appendRateLimitFields, rateLimitItem } from "../../src/http/fields.ts";

const limit = Limit.perMinute(100);
const rateLimit = (policy: string, decision: Decision) => {
  const headers = new Headers();
  appendRateLimitFields(headers, { policy, limit, decision });
  return headers.get("RateLimit");
};

it("tells each decision's own remaining and reset, however they follow each other", () => {
  const cases: Array<[string, Decision, string]> = [
    ["default", new Decision(true, 0, 49, 2_500), '"default";r=49;t=3'],
    ["default", new Decision(true, 0, 49, 2_500), '"default";r=49;t=3'],
    ["default", new Decision(true, 0, 48, 2_500), '"default";r=48;t=3'],
    ["default", new Decision(true, 0, 48, 3_500), '"default";r=48;t=4'],
    ["pro", new Decision(true, 0, 48, 3_500), '"pro";r=48;t=4'],
    ["default", new Decision(false, 1_200, 0, 9_000), '"default";r=0;t=2'],
    ["default", new Decision(true, 0, 49, 2_500), '"default";r=49;t=3'],
  ];
  for (const [policy, decision, expected] of cases) {
    assert.equal(rateLimit(policy, decision), expected);
    assert.equal(rateLimitItem(policy, decision), expected);
  }
});
