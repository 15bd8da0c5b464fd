// The accuracy rows of fleet rules keep their bounds, and would not
// without fleet rules: a limit lowered on one node holds the whole fleet.
import { test } from "node:test";
import assert from "node:assert/strict";
import { run } from "../../src/sim/accuracy/run.ts";
import { SCENARIOS_RULES } from "../../src/sim/accuracy/rules.ts";

for (const scenario of SCENARIOS_RULES) {
  test(`${scenario.label}: ${scenario.bound}`, () => {
    const shared = run(scenario, 1);
    assert.ok(scenario.holds(shared), JSON.stringify({ ...shared, perSecond: undefined }));
    const alone = run({ ...scenario, fleetRules: false }, 1);
    assert.ok(!scenario.holds(alone), `without fleet rules: ${alone.steady.toFixed(2)} R`);
  });
}
