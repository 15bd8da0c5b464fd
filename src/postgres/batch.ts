/**
 * Turns a batch of checks into the parameters of one database call:
 * validation of the caller's input, hashing of subjects, and the structural
 * refusals (duplicates, mixed modes, more new keys than a shard can hold).
 *
 * @module
 */

import type { QuotaCheck } from "./decision.ts";
import type { KeyHasher } from "./keys.ts";
import { FixedWindowPolicy } from "./policy.ts";

/** The most checks one batch may hold: a request checks a few quotas, not hundreds. */
export const MAX_BATCH = 64;

/** The arrays `rateguard_check_v1` takes, one entry per check. */
export interface BatchParams {
  readonly policies: string[];
  readonly subjects: string[];
  readonly limits: number[];
  readonly windowsMs: number[];
  readonly costs: number[];
  readonly shadow: boolean;
}

/**
 * Validates `checks` and hashes their subjects.
 *
 * @throws {TypeError} for a malformed check, or enforcement and shadow policies mixed.
 * @throws {RangeError} for a bad cost, an empty or oversized batch, a key
 *   checked twice, or more keys in one shard than it can ever hold.
 */
export async function prepareBatch(
  checks: readonly QuotaCheck[],
  options: { hasher: KeyHasher; maxRowsPerShard: number },
): Promise<BatchParams> {
  if (!Array.isArray(checks) || checks.length === 0 || checks.length > MAX_BATCH) {
    throw new RangeError(
      `checkAll: checks must be an array of 1 to ${MAX_BATCH} checks, got ${
        Array.isArray(checks) ? checks.length : typeof checks
      }`,
    );
  }
  checks.forEach(validateCheck);
  const shadow = checks[0].policy.mode === "shadow";
  if (checks.some((c) => (c.policy.mode === "shadow") !== shadow)) {
    // Mixed modes have no clear meaning for all-or-nothing: does an enforced
    // pass count when a shadow check would deny? Refuse rather than guess.
    throw new TypeError("checkAll: a batch must not mix enforced and shadow policies");
  }
  const [policies, subjects] = await Promise.all([
    Promise.all(checks.map((c) => c.policy.fingerprint())),
    Promise.all(checks.map((c) => options.hasher.hexFor(c.policy, c.subject))),
  ]);
  refuseDuplicates(policies, subjects);
  refuseOverfullShards(subjects, options.maxRowsPerShard);
  return {
    policies,
    subjects,
    limits: checks.map((c) => c.policy.limit),
    windowsMs: checks.map((c) => c.policy.windowMs),
    costs: checks.map((c) => c.cost ?? 1),
    shadow,
  };
}

function validateCheck(check: QuotaCheck, index: number): void {
  if (typeof check !== "object" || check === null || !(check.policy instanceof FixedWindowPolicy)) {
    throw new TypeError(`checkAll: checks[${index}].policy must be a FixedWindowPolicy`);
  }
  const cost = check.cost ?? 1;
  if (!Number.isInteger(cost) || cost < 1 || cost > check.policy.limit) {
    // A cost above the limit could never pass: a bug to fix, not a denial.
    throw new RangeError(
      `checkAll: checks[${index}].cost must be a whole number from 1 to the policy's limit ` +
        `${check.policy.limit}, got ${String(cost)}`,
    );
  }
}

function refuseDuplicates(policies: readonly string[], subjects: readonly string[]): void {
  const seen = new Map<string, number>();
  for (let i = 0; i < policies.length; i++) {
    const key = policies[i] + subjects[i];
    const first = seen.get(key);
    if (first !== undefined) {
      throw new RangeError(`checkAll: checks[${first}] and checks[${i}] count the same key`);
    }
    seen.set(key, i);
  }
}

// A batch with more keys in one shard than the shard holds could never be
// admitted, however long the caller waited.
function refuseOverfullShards(subjects: readonly string[], maxRowsPerShard: number): void {
  const perShard = new Map<string, number>();
  for (const subject of subjects) {
    const shard = subject.slice(0, 2);
    const count = (perShard.get(shard) ?? 0) + 1;
    if (count > maxRowsPerShard) {
      throw new RangeError(
        `checkAll: ${count} keys of the batch fall in one shard, which holds ${maxRowsPerShard}`,
      );
    }
    perShard.set(shard, count);
  }
}
