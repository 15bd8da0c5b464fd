/**
 * The fleet rules' swarm: a random fleet sharing rules under random rule
 * changes of every kind (every class, the default class `""` included),
 * restarts, joins and partitions for a minute of virtual time; then the
 * faults end and every running member must hold the same rules, in its
 * table and its book, within {@link OUT_OF_STEP_MS}, the bound
 * docs/fleet-rules.md names. One seed decides the whole run, and a failure
 * says how to replay it.
 *
 * @module
 */

import { Prng } from "../../core/prng.ts";
import { KeyLimit } from "../../core/key_limit.ts";
import { Limit } from "../../core/limit.ts";
import type { RuleChange } from "../../core/fleet_node.ts";
import { OUT_OF_STEP_MS } from "../../core/rules_sync/mod.ts";
import { RulesFleet } from "../faces/rules_fleet.ts";

/** Virtual time the faults run for. */
const FAULT_PHASE_MS = 60_000;
/** Members 0 and 1 are every member's seeds: they restart, but never leave for good. */
const SEEDS = [0, 1];
const CLASSES = ["", "pro", "team", "free"];
const KEYS = ["k0", "k1", "k2", "k3"];

/** What a run found. */
export interface SwarmResult {
  /** The seed. */
  readonly seed: number;
  /** Whether every running member agreed within the bound, in its table and its book. */
  readonly ok: boolean;
  /** Virtual ms after the faults ended until they agreed, when they did. */
  readonly settledMs: number | undefined;
  /** What happened, a line a step; with why it failed, when it did. */
  readonly log: readonly string[];
}

/** The command that replays `seed`. */
export function swarmReplayCommand(seed: number): string {
  return `RULES_SWARM_FROM=${seed} RULES_SWARM_SEEDS=1 npx deno test -A tests/sim/rules_swarm_test.ts`;
}

/**
 * Runs the swarm for `seed`.
 *
 * @param seed Decides the size, the changes and the faults.
 * @returns What it found.
 */
export function runRulesSwarm(seed: number): SwarmResult {
  const prng = new Prng(seed ^ 0x31_5eed);
  const size = 3 + prng.below(4);
  const log: string[] = [`seed ${seed}: ${size} members`];
  const fleet = new RulesFleet({ seed, size, faults: { lossRate: prng.below(3) * 0.02 } });
  fleet.runUntil(5_000);
  const endMs = fleet.nowMs + FAULT_PHASE_MS;
  for (let t = fleet.nowMs; t < endMs; t += 200 + prng.below(1_800)) {
    fleet.runUntil(t);
    log.push(`${t} ms: ${step(fleet, prng)}`);
  }
  fleet.runUntil(endMs);
  fleet.topology.heal();
  fleet.faults = {};
  for (let i = 0; i < fleet.size; i++) if (!fleet.node(i)) fleet.restart(i);
  log.push(`${endMs} ms: the faults end`);
  const settledMs = fleet.runUntilConverged(OUT_OF_STEP_MS, 200);
  const books = settledMs === undefined ? undefined : disagreeingBooks(fleet);
  if (settledMs === undefined) {
    log.push(`no agreement within ${OUT_OF_STEP_MS} ms: ${digests(fleet)}`);
  } else if (books) log.push(`the tables agree, the books do not: ${books}`);
  else log.push(`agreed ${settledMs} ms after the faults ended`);
  return { seed, ok: settledMs !== undefined && books === undefined, settledMs, log };
}

/** One random step: a change on a running member, a restart, a join, or a partition. */
function step(fleet: RulesFleet, prng: Prng): string {
  const running = Array.from({ length: fleet.size }, (_, i) => i).filter((i) =>
    fleet.node(i) !== undefined
  );
  const roll = prng.below(20);
  if (roll < 14 && running.length > 0) {
    return change(fleet, prng, running[prng.below(running.length)]);
  }
  if (roll < 16 && running.length > 1) {
    const i = running[prng.below(running.length)];
    const afterMs = prng.below(5_000);
    fleet.crash(i);
    fleet.at(fleet.nowMs + afterMs, () => {
      if (!fleet.node(i)) fleet.restart(i);
    });
    return `restart ${i} after ${afterMs} ms`;
  }
  if (roll < 18 && fleet.size < 9) {
    const through = SEEDS.concat(running)[prng.below(SEEDS.length + running.length)];
    const i = fleet.add({ seeds: [through] });
    return `${i} joins through ${through}`;
  }
  const sides: number[][] = [[], []];
  for (let i = 0; i < fleet.size; i++) sides[prng.below(2)].push(i);
  const forMs = 2_000 + prng.below(15_000);
  fleet.topology.partition(sides);
  fleet.at(fleet.nowMs + forMs, () => fleet.topology.heal());
  return `partition ${JSON.stringify(sides)} for ${forMs} ms`;
}

/** A random change on member `i`, as its admin API makes it: only what its book takes. */
function change(fleet: RulesFleet, prng: Prng, i: number): string {
  const book = fleet.book(i);
  const pick = <T>(list: readonly T[]): T => list[prng.below(list.length)];
  const limit = () => {
    const base = pick([Limit.perSecond, Limit.perMinute, Limit.perHour])(1 + prng.below(1_000));
    return prng.below(2) === 0 ? base : base.burst(1 + prng.below(100));
  };
  const className = pick(CLASSES);
  const key = pick(KEYS);
  const remove = prng.below(3) === 0;
  const say = (c: RuleChange) => {
    fleet.change(i, c);
    return `on ${i}: ${c.kind} ${JSON.stringify(c.className)} ${c.key} = ${String(c.value)}`;
  };
  switch (prng.below(7)) {
    case 0: {
      if (className === "") {
        return say({ kind: "defaultLimit", className, key: "", value: limit() });
      }
      if (!remove) return say({ kind: "class", className, key: "", value: limit() });
      if (!book.hasClass(className)) return `on ${i}: no class ${className} to remove`;
      // As `GuardRules.removeClass`: the class, then its shadow, which the book dropped with it.
      const shadowed = book.shadows().some(([c]) => c === className);
      const line = say({ kind: "class", className, key: "", value: undefined });
      if (shadowed) say({ kind: "shadow", className, key: "", value: undefined });
      return line;
    }
    case 1:
    case 2: {
      const value = remove
        ? undefined
        : prng.below(3) === 0
        ? KeyLimit.class(pick(CLASSES.slice(1)))
        : limit();
      if (remove && !book.keyLimits().some(([c, k]) => c === className && k === key)) {
        return `on ${i}: no key limit ${className}/${key} to remove`;
      }
      return say({ kind: "keyLimit", className, key, value });
    }
    case 3:
      if (!book.hasClass(className)) return `on ${i}: no class ${className} to shadow`;
      return say({ kind: "shadow", className, key: "", value: remove ? undefined : limit() });
    case 4:
      return say({ kind: "dryRun", className: "", key: "", value: prng.below(2) === 0 });
    case 5: {
      const ms = 1_000 + prng.below(120_000);
      return `on ${i}: block ${key} for ${ms} ms: ${fleet.block(i, key, ms)}`;
    }
    default:
      return `on ${i}: reset ${key}: ${fleet.reset(i, key)}`;
  }
}

/** The running members' digests, for a failure's log. */
function digests(fleet: RulesFleet): string {
  const parts: string[] = [];
  for (let i = 0; i < fleet.size; i++) {
    const s = fleet.stats(i);
    if (s) {
      parts.push(`${i}: ${s.rules.digest} (${s.rules.live})${s.rules.learning ? " learning" : ""}`);
    }
  }
  return parts.join(", ");
}

/** Running members whose book differs from the first's, or undefined when all agree. */
function disagreeingBooks(fleet: RulesFleet): string | undefined {
  let first: string | undefined;
  const apart: string[] = [];
  for (let i = 0; i < fleet.size; i++) {
    if (!fleet.node(i)) continue;
    const b = fleet.book(i);
    const text = JSON.stringify({
      // Sorted: each member adds them in the order it heard them.
      classes: b.classes().map(([n, l]) => `${n}=${l}/${l.burstSize()}`).sort(),
      shadows: b.shadows().map(([n, l]) => `${n}=${l}/${l.burstSize()}`).sort(),
      keyLimits: b.keyLimits().map(([c, k, l]) => `${c}/${k}=${l}`).sort(),
      defaultLimit: String(b.defaultLimit()),
      dryRun: fleet.dryRun(i),
    });
    first ??= text;
    if (text !== first) apart.push(`${i}: ${text}`);
  }
  return apart.length === 0 ? undefined : `first: ${first}; apart: ${apart.join("; ")}`;
}
