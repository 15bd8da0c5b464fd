/**
 * A limit's text: the units a period is written in, reading `"1000/min"`
 * or `"100/15min"` into a count and a period, and writing a period back in
 * the longest unit that divides it. What the text says is checked against
 * a limit's bounds by `Limit.parse` (`limit.ts`), not here.
 *
 * @module
 */

import { describe } from "./describe.ts";

/** The units' lengths, ms: the periods `Limit.perSecond`, `perMinute` and `perHour` take too. */
export const SECOND_MS = 1_000;
/** A minute, ms. */
export const MINUTE_MS: number = 60 * SECOND_MS;
/** An hour, ms. */
export const HOUR_MS: number = 60 * MINUTE_MS;
/** A day, ms. */
export const DAY_MS: number = 24 * HOUR_MS;

const UNITS: Readonly<Record<string, number>> = {
  ms: 1,
  s: SECOND_MS,
  sec: SECOND_MS,
  second: SECOND_MS,
  seconds: SECOND_MS,
  min: MINUTE_MS,
  m: MINUTE_MS,
  minute: MINUTE_MS,
  minutes: MINUTE_MS,
  h: HOUR_MS,
  hour: HOUR_MS,
  hours: HOUR_MS,
  d: DAY_MS,
  day: DAY_MS,
  days: DAY_MS,
};

/** The units a limit's text is written in, longest first: the first that divides a period names it. */
const TEXT_UNITS: readonly (readonly [string, number])[] = [
  ["d", DAY_MS],
  ["h", HOUR_MS],
  ["min", MINUTE_MS],
  ["s", SECOND_MS],
  ["ms", 1],
];

/**
 * The count and the period a limit's text says, unchecked: `"1000"` (a
 * second), `"1000/min"`, `"100/15min"`, in the units of {@link UNITS}.
 *
 * @throws {TypeError} when the text is not of that form, naming it.
 */
export function readRate(text: string): { readonly count: number; readonly periodMs: number } {
  if (typeof text !== "string") {
    throw new TypeError(`a limit must be a string like "1000/min", got ${describe(text)}`);
  }
  const match = /^\s*(\d+)\s*(?:\/\s*(\d+)?\s*([a-z]+))?\s*$/i.exec(text);
  const unitMs = match ? UNITS[(match[3] ?? "s").toLowerCase()] : undefined;
  if (!match || unitMs === undefined) {
    throw new TypeError(
      `invalid limit ${JSON.stringify(text)}: expected a count with an optional period, ` +
        `like "1000", "1000/s", "1000/min", "5000/h", "10000/d" or "100/15min"`,
    );
  }
  return { count: Number(match[1]), periodMs: Number(match[2] ?? 1) * unitMs };
}

/** `min`, `15min`, `d`, `1500ms`: a period in the longest unit that divides it, the 1 left out. */
export function periodText(periodMs: number): string {
  const [unit, ms] = TEXT_UNITS.find(([, ms]) => periodMs % ms === 0)!;
  return periodMs === ms ? unit : `${periodMs / ms}${unit}`;
}
