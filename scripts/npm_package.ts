/**
 * The npm package: compiled ESM JavaScript with declarations and source
 * maps, built with `tsc` from the same sources JSR publishes, into
 * `build/npm/package` (gitignored), with a manifest generated from
 * `deno.json`'s exports and the root `package.json`. The root manifest stays
 * the development one (private, its exports the `.ts` files the suite runs):
 * what is published is only what this file writes. `scripts/npm.ts` is its
 * command line; `tests/package/npm_pack.ts` installs what it packs.
 *
 * @module
 */

import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

/** The repository this file lives in. */
export const REPO: string = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * The runtime dependencies of the sources, each an optional peer of the
 * package: what needs it, so that a user of the bare guard installs nothing.
 * The versions are the root `package.json`'s `dependencies`, or its
 * `peerDependencies` for a framework only a subpath adapts (Express).
 */
export const PEERS: Readonly<Record<string, string>> = {
  "hono": "the types of ./hono, and the rateguard command",
  "@hono/node-server": "the rateguard command on Node.js",
  "postgres": "./postgres",
  "@opentelemetry/api": "./metrics",
  "express": "./express",
};

type Json = Record<string, unknown>;
const readJson = (path: string): Json => JSON.parse(readFileSync(path, "utf8"));

/** Where a source file's compiled module and declarations land, package-relative. */
function compiled(source: string, ext: ".js" | ".d.ts"): string {
  return `./dist/${source.replace(/^\.\//, "").replace(/\.ts$/, ext)}`;
}

/**
 * The published manifest, from `deno.json` (exports) and the root
 * `package.json` (name, version, description, license, engines, and the
 * peers' versions).
 */
export function npmManifest(deno: Json, root: Json): Json {
  const entries = deno.exports as Record<string, string>;
  const deps = (root.dependencies ?? {}) as Record<string, string>;
  const peers = (root.peerDependencies ?? {}) as Record<string, string>;
  const unknown = Object.keys(deps).filter((d) => !(d in PEERS));
  if (unknown.length > 0) {
    throw new Error(`package.json dependencies not described in PEERS: ${unknown.join(", ")}`);
  }
  const peerDependencies: Record<string, string> = {};
  const peerDependenciesMeta: Record<string, { optional: true }> = {};
  for (const name of Object.keys(PEERS)) {
    const range = deps[name] ?? peers[name];
    if (range === undefined) throw new Error(`PEERS names ${name}, not in package.json`);
    peerDependencies[name] = range;
    peerDependenciesMeta[name] = { optional: true };
  }
  return {
    name: deno.name,
    version: deno.version,
    description: root.description,
    license: deno.license,
    repository: root.repository,
    type: "module",
    engines: root.engines,
    exports: Object.fromEntries(
      Object.entries(entries).map((
        [subpath, source],
      ) => [subpath, { types: compiled(source, ".d.ts"), import: compiled(source, ".js") }]),
    ),
    // npm wants a bin path without "./" (and warns when it rewrites one).
    bin: { rateguard: "bin/rateguard.js" },
    // docs/ too: the README's links to its pages resolve in the package.
    files: ["dist/", "bin/", "mod.ts", "cli.ts", "src/", "docs/", "CHANGELOG.md"],
    // Loading a module of the library does nothing else; the command does.
    sideEffects: ["./bin/rateguard.js", "./dist/cli.js"],
    peerDependencies,
    peerDependenciesMeta,
    // A scoped package is private on its first publish unless it says otherwise.
    publishConfig: { access: "public" },
    keywords: ["rate limit", "rate limiter", "distributed", "gossip", "swim", "gcra", "sidecar"],
  };
}

/**
 * The `rateguard` command: the compiled `cli.ts` (its `./cli` export), so
 * that it has its flags and its shutdown. Importing it starts nothing, so
 * the command calls its `main()`. Node reports a missing `hono` as a stack
 * trace; this says in one line what to install.
 */
const BIN = `#!/usr/bin/env node
// The rateguard sidecar: the compiled cli.ts, flags and signals included.
let cli;
try {
  cli = await import("../dist/cli.js");
} catch (e) {
  if (!/Cannot find (?:package|module) 'hono'/.test(String(e?.message))) throw e;
  process.stderr.write(
    "rateguard: the sidecar needs hono (and @hono/node-server on Node.js): " +
      "npm install hono @hono/node-server\\n",
  );
  process.exit(1);
}
await cli.main();
`;

/**
 * The environment for the tools and runtimes this starts: no loader (tsx
 * puts one in NODE_OPTIONS), and none of the npm_* variables of an `npm run`
 * around us, one of which (npm_config_local_prefix) points at the
 * repository, where an install must never land.
 */
export function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(npm_|NODE_OPTIONS$|TSX_)/i.test(name)) env[name] = value;
  }
  return env;
}

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, {
    cwd,
    env: childEnv(),
    encoding: "utf8",
    timeout: 180_000,
  });
  if (result.status !== 0) {
    const why = result.error?.message ?? `exit ${result.status ?? result.signal}`;
    throw new Error(`${command} ${args.join(" ")}: ${why}\n${result.stdout}${result.stderr}`);
  }
  return result.stdout;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/**
 * Builds the package into `<out>/package` and returns that directory: the
 * sources are staged there and compiled in place, so that the source maps
 * and declaration maps point at the `.ts` files shipped beside them.
 */
export function buildPackage(out: string = join(REPO, "build/npm")): string {
  const deno = readJson(join(REPO, "deno.json"));
  const root = readJson(join(REPO, "package.json"));
  const pkg = join(out, "package");
  rmSync(out, { recursive: true, force: true });
  mkdirSync(pkg, { recursive: true });
  for (const file of ["mod.ts", "cli.ts"]) cpSync(join(REPO, file), join(pkg, file));
  cpSync(join(REPO, "src"), join(pkg, "src"), { recursive: true });
  const entries = Object.values(deno.exports as Record<string, string>);
  writeFileSync(
    join(out, "tsconfig.json"),
    JSON.stringify({
      extends: relative(out, join(REPO, "tsconfig.npm.json")),
      compilerOptions: { rootDir: "package", outDir: "package/dist" },
      files: entries.map((e) => join("package", e)),
    }),
  );
  run(join(REPO, "node_modules/.bin/tsc"), ["-p", join(out, "tsconfig.json")], REPO);
  // Ship a source only where it was compiled: the maps point at it.
  for (const file of filesUnder(pkg)) {
    if (!file.endsWith(".ts") || file.startsWith(join(pkg, "dist"))) continue;
    if (!existsSync(join(pkg, "dist", relative(pkg, file).replace(/\.ts$/, ".js")))) rmSync(file);
  }
  removeEmptyDirs(join(pkg, "src"));
  mkdirSync(join(pkg, "bin"));
  writeFileSync(join(pkg, "bin/rateguard.js"), BIN, { mode: 0o755 });
  writeFileSync(join(pkg, "package.json"), JSON.stringify(npmManifest(deno, root), null, 2) + "\n");
  for (const file of ["README.md", "LICENSE", "CHANGELOG.md", "docs"]) {
    cpSync(join(REPO, file), join(pkg, file), { recursive: true });
  }
  return pkg;
}

function removeEmptyDirs(dir: string): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) removeEmptyDirs(join(dir, e.name));
  }
  if (readdirSync(dir).length === 0) rmSync(dir, { recursive: true });
}

/** What `npm pack` made. */
export interface Packed {
  /** The tarball's absolute path. */
  readonly tarball: string;
  /** Its size in bytes. */
  readonly bytes: number;
  /** The bytes of its files, unpacked. */
  readonly unpackedBytes: number;
  /** How many files it holds. */
  readonly files: number;
}

/** Packs the package built at `pkg` into `dest` with `npm pack`. */
export function packPackage(pkg: string, dest: string = dirname(pkg)): Packed {
  const [info] = JSON.parse(
    run("npm", ["pack", "--json", "--pack-destination", dest], pkg),
  ) as { filename: string; size: number; unpackedSize: number; entryCount: number }[];
  return {
    tarball: join(dest, info.filename),
    bytes: info.size,
    unpackedBytes: info.unpackedSize,
    files: info.entryCount,
  };
}

/** The arguments that keep an install from the registry where the cache has it. */
export const NPM_INSTALL: readonly string[] = [
  "install",
  "--prefer-offline",
  "--no-audit",
  "--no-fund",
  "--no-package-lock",
];

/** A fresh project outside the repository, with a `package.json` and nothing else. */
export function freshProject(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `rateguard-${name}-`));
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: `rateguard-${name}`, private: true, type: "module" }),
  );
  return dir;
}

/** What `npm install <tarball>` of the bare guard puts on disk. */
export interface Footprint {
  /** The packages in `node_modules`, the guard included. */
  readonly packages: readonly string[];
  /** The bytes of every file in `node_modules`. */
  readonly bytes: number;
}

/** The packages and bytes installed in `dir/node_modules`. */
export function footprintOf(dir: string): Footprint {
  const modules = join(dir, "node_modules");
  const files = filesUnder(modules).map((f) => relative(modules, f));
  // A package's own manifest, at any depth of nesting, not one of the
  // package.json files some packages keep in their folders (hono's cjs/).
  const manifest = /^((?:@[^/]+\/)?[^/]+(?:\/node_modules\/(?:@[^/]+\/)?[^/]+)*)\/package\.json$/;
  const packages = files.flatMap((f) => manifest.exec(f)?.[1] ?? []).sort();
  const bytes = files.reduce((sum, f) => sum + statSync(join(modules, f)).size, 0);
  return { packages, bytes };
}

/** Installs `tarball` alone into a fresh project and measures it; removes the project. */
export function bareFootprint(tarball: string): Footprint {
  const dir = freshProject("footprint");
  try {
    run("npm", [...NPM_INSTALL, tarball], dir);
    return footprintOf(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Bytes as the README states them: kB below a megabyte, MB above. */
export function bytesText(bytes: number): string {
  return bytes < 1e6 ? `${Math.round(bytes / 1e3)} kB` : `${(bytes / 1e6).toFixed(2)} MB`;
}

/** The README's sentence on the package's size and the bare guard's install. */
export function sizeSentence(packed: Packed, bare: Footprint): string {
  const others = bare.packages.length - 1;
  return `${bare.packages.length === 1 ? "one package" : `${bare.packages.length} packages`}, ` +
    `with ${others === 0 ? "no" : others} dependencies: ${bytesText(packed.bytes)} packed, ` +
    `${bytesText(packed.unpackedBytes)} unpacked, ${bytesText(bare.bytes)} in \`node_modules\``;
}

/** The figures of {@link sizeSentence} in a README, or undefined where it has none. */
export function readmeSize(
  readme: string,
): [packed: number, unpacked: number, installed: number] | undefined {
  const unit = (n: string, u: string) => Number(n) * (u === "MB" ? 1e6 : 1e3);
  const m =
    /dependencies: ([\d.]+) (kB|MB) packed, ([\d.]+) (kB|MB) unpacked, ([\d.]+) (kB|MB) in `node_modules`/
      .exec(readme.replace(/\s+/g, " "));
  return m ? [unit(m[1], m[2]), unit(m[3], m[4]), unit(m[5], m[6])] : undefined;
}
