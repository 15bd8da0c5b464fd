/**
 * What a scenario reports: its checks, its numbers, and how to replay it.
 *
 * @module
 */

import type { Cluster } from "../faces/cluster.ts";

/** The outcome of one run of a scenario. */
export interface ScenarioResult {
  /** The scenario's name. */
  readonly name: string;
  /** The seed it ran from. */
  readonly seed: number;
  /** Whether every check held. */
  readonly ok: boolean;
  /** The checks that failed. */
  readonly failures: readonly string[];
  /** Numbers it measured, by name (times in milliseconds of virtual time). */
  readonly metrics: Readonly<Record<string, number>>;
}

/**
 * The command that replays `name` from `seed`.
 *
 * @param name The scenario.
 * @param seed The seed of the run.
 * @returns A shell command.
 */
export function replayCommand(name: string, seed: number): string {
  return `deno task sim ${name} --seed ${seed}`;
}

/**
 * A human summary of `result`, with the replay command when it failed.
 *
 * @param result A scenario's result.
 * @returns One line, with the replay command when it failed.
 */
export function summarize(result: ScenarioResult): string {
  const numbers = Object.entries(result.metrics).map(([k, v]) => `${k}=${v}`).join(" ");
  const head = `${result.ok ? "ok  " : "FAIL"} ${result.name} seed=${result.seed} ${numbers}`;
  if (result.ok) return head;
  const lines = result.failures.map((f) => `     ${f}`);
  return [head, ...lines, `     replay: ${replayCommand(result.name, result.seed)}`].join("\n");
}

/** Collects the checks and numbers of one run. */
export class Report {
  readonly #name: string;
  readonly #seed: number;
  readonly #failures: string[] = [];
  readonly #metrics: Record<string, number> = {};

  /** @param name The scenario. @param seed Its seed. */
  constructor(name: string, seed: number) {
    this.#name = name;
    this.#seed = seed;
  }

  /** Records a failure unless `condition` holds. */
  expect(condition: boolean, failure: string): void {
    if (!condition) this.#failures.push(failure);
  }

  /** Records a number. */
  metric(name: string, value: number): void {
    this.#metrics[name] = Math.round(value * 100) / 100;
  }

  /** The result. */
  done(): ScenarioResult {
    return {
      name: this.#name,
      seed: this.#seed,
      ok: this.#failures.length === 0,
      failures: [...this.#failures],
      metrics: { ...this.#metrics },
    };
  }
}

/**
 * Runs `cluster` in steps of `stepMs` until `condition` holds or `limitMs`
 * have passed.
 *
 * @returns The virtual time it first held at, or undefined.
 *
 * @param cluster The cluster to run.
 * @param condition What to wait for.
 * @param limitMs The virtual time to give up at.
 * @param stepMs How long to run between two looks.
 */
export function waitFor(
  cluster: Cluster,
  condition: () => boolean,
  limitMs: number,
  stepMs = 50,
): number | undefined {
  const endMs = cluster.nowMs + limitMs;
  for (;;) {
    if (condition()) return cluster.nowMs;
    if (cluster.nowMs >= endMs) return undefined;
    cluster.runUntil(Math.min(endMs, cluster.nowMs + stepMs));
  }
}
