/**
 * The fleet rules' swarm (issue 31): over many seeds, random changes of
 * every kind and class (the default class's too), restarts, joins and
 * partitions, after which every member holds the same rules within the
 * bound of docs/fleet-rules.md. CI runs a few seeds; more on demand:
 * `RULES_SWARM_SEEDS=200 npx deno test -A tests/sim/rules_swarm_test.ts`
 * (`npx deno task swarm:rules`), from `RULES_SWARM_FROM` (default 1).
 */

import { test } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { runRulesSwarm, swarmReplayCommand } from "../../src/sim/scenarios/rules_swarm.ts";

const FROM = Number(process.env.RULES_SWARM_FROM ?? 1);
const SEEDS = Number(process.env.RULES_SWARM_SEEDS ?? 3);

test(`the swarm: seeds ${FROM} to ${FROM + SEEDS - 1} agree within the bound`, () => {
  for (let seed = FROM; seed < FROM + SEEDS; seed++) {
    const result = runRulesSwarm(seed);
    if (!result.ok) {
      assert.fail(
        `seed ${seed} did not agree; replay: ${swarmReplayCommand(seed)}\n` + result.log.join("\n"),
      );
    }
  }
});
