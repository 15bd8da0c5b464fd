/**
 * The release of rateguard this code is: the one place the runtime reads it
 * (`rateguard --version`, `guard.stats().guardVersion`). A constant, not an
 * import of `deno.json`, so that the npm build and every runtime read it
 * alike; `tests/layout_test.ts` holds it equal to the manifests' version.
 *
 * @example
 * ```ts
 * import { VERSION } from "./version.ts";
 * console.log(`rateguard ${VERSION}`); // rateguard 0.2.0
 * ```
 *
 * @module
 */

/** The release, as in `deno.json`, `jsr.json` and `package.json`. */
export const VERSION = "0.2.0";
