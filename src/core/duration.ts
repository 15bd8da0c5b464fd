/**
 * Durations as people write them in flags and policies: `500ms`, `10s`,
 * `2m` (or `2min`), or a bare number of milliseconds. One reader, for the
 * partition policy's text and the sidecar's flags alike.
 *
 * @module
 */

const DURATION = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min)?\s*$/i;

/**
 * Reads a duration.
 *
 * @param text Such as `200ms`, `1.5s`, `2m`, `2min` or `500`.
 * @returns Milliseconds, or `undefined` when `text` is not a duration.
 */
export function parseDurationMs(text: string): number | undefined {
  const m = DURATION.exec(text);
  if (m === null) return undefined;
  const unit = (m[2] ?? "ms").toLowerCase();
  return Number(m[1]) * (unit === "s" ? 1_000 : unit === "ms" ? 1 : 60_000);
}
