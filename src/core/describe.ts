/**
 * How an error message names a value a caller gave that is not what was
 * asked for: short, and safe to print (a long string is cut, an object is
 * named by its type, never printed). The one form for every `TypeError`
 * and `RangeError` the library throws at its callers, whatever the layer.
 *
 * @module
 */

/** A short, safe description of an unexpected value for an error message. */
export function describe(value: unknown): string {
  if (typeof value === "string") {
    return JSON.stringify(value.length > 64 ? value.slice(0, 64) + "…" : value);
  }
  if (typeof value === "number" || typeof value === "boolean" || value == null) {
    return String(value);
  }
  if (typeof value === "bigint") return `${value}n`;
  return Array.isArray(value) ? "an array" : `a value of type ${typeof value}`;
}
