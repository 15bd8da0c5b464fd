/**
 * A small seeded pseudo-random generator, so that every random choice of the
 * core (probe order, helpers for indirect probes, sequence numbers) is a
 * function of one seed: the same seed replays the same run.
 *
 * xoshiro128** (Blackman and Vigna, 2018), a 128-bit state advanced with
 * 32-bit operations only, seeded through splitmix32 so that nearby seeds give
 * unrelated streams. Not for cryptography.
 *
 * @module
 */

/** The golden-ratio increment of splitmix32, also used to derive sub-seeds. */
const GOLDEN = 0x9e3779b9;

/**
 * One step of splitmix32: a well-mixed 32-bit value from a counter.
 *
 * @param state The counter, advanced by the caller.
 * @returns A 32-bit unsigned value.
 */
function splitmix32(state: number): number {
  let z = (state + GOLDEN) >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
  z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
  return (z ^ (z >>> 15)) >>> 0;
}

/**
 * A deterministic pseudo-random generator (xoshiro128**).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Prng } from "./prng.ts";
 * const a = new Prng(42);
 * const b = new Prng(42);
 * assert(a.nextU32() === b.nextU32());
 * assert(a.below(10) < 10);
 * ```
 */
export class Prng {
  #s0: number;
  #s1: number;
  #s2: number;
  #s3: number;

  /**
   * A generator whose whole stream follows from `seed`.
   *
   * @param seed Any integer; only its low 32 bits are used.
   * @throws {TypeError} if `seed` is not an integer.
   */
  constructor(seed: number) {
    if (!Number.isInteger(seed)) throw new TypeError(`seed must be an integer, got ${seed}`);
    let counter = seed >>> 0;
    const next = (): number => {
      const value = splitmix32(counter);
      counter = (counter + GOLDEN) >>> 0;
      return value;
    };
    this.#s0 = next();
    this.#s1 = next();
    this.#s2 = next();
    this.#s3 = next();
    // xoshiro must not start from the all-zero state, which it never leaves.
    if ((this.#s0 | this.#s1 | this.#s2 | this.#s3) === 0) this.#s0 = 1;
  }

  /**
   * Returns the next 32-bit unsigned value.
   *
   * @returns An integer from 0 to 2^32 − 1.
   */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.#s1, 5), 7), 9) >>> 0;
    const t = this.#s1 << 9;
    this.#s2 ^= this.#s0;
    this.#s3 ^= this.#s1;
    this.#s1 ^= this.#s2;
    this.#s0 ^= this.#s3;
    this.#s2 ^= t;
    this.#s3 = rotl(this.#s3, 11);
    return result;
  }

  /**
   * Returns a float uniformly distributed in [0, 1), with 32 bits of randomness.
   *
   * @returns A float in [0, 1).
   */
  nextFloat(): number {
    return this.nextU32() / 0x1_0000_0000;
  }

  /**
   * Returns an integer uniformly distributed in [0, n).
   *
   * @throws {RangeError} if `n` is not an integer from 1 to 2^32.
   *
   * @param n The bound, exclusive.
   * @returns An integer from 0 to `n` − 1.
   */
  below(n: number): number {
    if (!Number.isInteger(n) || n < 1 || n > 0x1_0000_0000) {
      throw new RangeError(`n must be an integer from 1 to 2^32, got ${n}`);
    }
    // Rejection sampling removes the bias a plain modulo would have.
    const limit = 0x1_0000_0000 - (0x1_0000_0000 % n);
    for (;;) {
      const x = this.nextU32();
      if (x < limit) return x % n;
    }
  }

  /**
   * Shuffles `items` in place (Fisher–Yates) and returns it.
   *
   * @param items The array to shuffle.
   * @returns The same array, shuffled.
   */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.below(i + 1);
      const held = items[i];
      items[i] = items[j];
      items[j] = held;
    }
    return items;
  }

  /**
   * Returns a new generator whose stream is independent of this one's.
   *
   * @returns A generator seeded from this one's next value.
   */
  fork(): Prng {
    return new Prng(this.nextU32());
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
