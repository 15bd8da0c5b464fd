// The interleaved rounds of the in-process HTTP benches
// (bench/sidecar_bench.ts, bench/node_http_bench.ts): every case warmed
// up, then each round runs every case, starting one case further on each
// time (a case's garbage is collected partly during the next one, and no
// case should always follow the same), and a figure is a median of rounds.

/** A case's figures, one per round. */
export interface Timed {
  /** Wall-clock microseconds a request. */
  readonly us: number[];
  /** CPU microseconds a request. */
  readonly cpuUs: number[];
}

/**
 * Runs `round(c, 0)` once for every case as its warm-up (its figures
 * dropped), then `rounds` interleaved rounds, `round(c, r)` with r from 1.
 */
export async function interleave<C extends Timed>(
  cases: readonly C[],
  rounds: number,
  round: (c: C, r: number) => Promise<void>,
): Promise<void> {
  for (const c of cases) await round(c, 0);
  for (const c of cases) c.us.length = c.cpuUs.length = 0;
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < cases.length; i++) await round(cases[(i + r) % cases.length], r + 1);
  }
}

/** The median of `xs` (the upper one of an even count). */
export const median = (xs: number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
