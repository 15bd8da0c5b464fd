// The library's source files, for the layout tests: every `.ts` under a
// folder, at any depth, as paths from the repository's root.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Every `.ts` file under `dir`, depth first. */
export function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}
