/**
 * The round trip to the members this node probes, measured on its own
 * probes (Jacobson's smoothed mean and deviation, as TCP keeps them, with
 * Karn's rule: only a probe answered at its first ping is a sample), and
 * the wait it gives a direct ping before trying again. A lost ping or ack
 * then costs a retry a few round trips later, not the whole probe timeout
 * (half a period), and a probe has several direct tries before its period
 * ends: under 30% loss a probe with two tries failed one time in nine
 * (both tries and three helpers lost), which at a thousand members was a
 * suspicion of a living member every few periods somewhere. No setting: a
 * LAN's round trip of a millisecond or two and a region's of a hundred
 * give their own waits.
 *
 * @module
 */

/** Gain of the smoothed mean (TCP's 1/8) and of the mean deviation (1/4). */
const MEAN_GAIN = 1 / 8;
const DEVIATION_GAIN = 1 / 4;

/**
 * The least wait before a retry, as a fraction of the protocol period: a
 * bound on how many datagrams a probe may spend, not a guess at the network.
 */
const LEAST_WAIT_PERIODS = 1 / 50;

/** One node's estimate of its probes' round trip. */
export class RoundTrip {
  #meanMs: number | undefined;
  #deviationMs = 0;
  readonly #leastWaitMs: number;

  /** @param periodMs The protocol period, which bounds the least wait. */
  constructor(periodMs: number) {
    this.#leastWaitMs = periodMs * LEAST_WAIT_PERIODS;
  }

  /** The smoothed round trip, once measured. */
  get meanMs(): number | undefined {
    return this.#meanMs;
  }

  /** A ping answered at its first try took `ms` there and back. */
  sample(ms: number): void {
    if (!(ms >= 0) || !Number.isFinite(ms)) return;
    const mean = this.#meanMs;
    if (mean === undefined) {
      this.#meanMs = ms;
      this.#deviationMs = ms / 2;
      return;
    }
    this.#deviationMs += DEVIATION_GAIN * (Math.abs(ms - mean) - this.#deviationMs);
    this.#meanMs = mean + MEAN_GAIN * (ms - mean);
  }

  /**
   * How long a direct ping waits for its ack before the next try: the
   * smoothed round trip plus four deviations, at least twice the round
   * trip and `LEAST_WAIT_PERIODS` of a period; undefined until measured.
   */
  retryMs(): number | undefined {
    const mean = this.#meanMs;
    if (mean === undefined) return undefined;
    return Math.max(this.#leastWaitMs, 2 * mean, mean + 4 * this.#deviationMs);
  }
}
