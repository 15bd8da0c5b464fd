import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { npmManifest, PEERS } from "../scripts/npm_package.ts";
import { VERSION } from "../src/version.ts";

const read = (path: string) => readFileSync(path, "utf8");
const json = (path: string) => JSON.parse(read(path));

test("jsr.json and deno.json describe the same package", () => {
  // `deno publish` reads deno.json whenever it exists and ignores jsr.json,
  // so the package metadata lives in both and must agree.
  const deno = json("deno.json");
  const jsr = json("jsr.json");
  for (const field of ["name", "version", "license", "exports", "publish"]) {
    assert.deepEqual(jsr[field], deno[field], field);
  }
  assert.equal(jsr.name, "@rateguard/guard");
  const npm = json("package.json");
  assert.equal(npm.version, jsr.version);
  assert.deepEqual(npm.exports, deno.exports, "package.json exports the same entry points");
});

test("every file the README links to ships in both packages, so its links hold on jsr.io and npm", () => {
  // jsr.io resolves a README's relative link in the package, npm's site in
  // the manifest's repository: the pages ship rather than the links growing
  // the repository's address.
  const deno = json("deno.json");
  const npm = npmManifest(deno, json("package.json"));
  assert.ok(npm.repository, "the npm manifest names the repository");
  // buildPackage copies these beside what "files" lists; npm always packs them.
  const npmFiles = [...(npm.files as string[]), "README.md", "LICENSE"];
  const shipped = (list: string[], file: string) =>
    list.some((entry) => entry.endsWith("/") ? file.startsWith(entry) : entry === file);
  const links = [...read("README.md").matchAll(/\]\((?![a-z]+:)([^)#\s]+)/g)].map((m) => m[1]);
  assert.ok(links.some((l) => l.startsWith("docs/")), "the README links to docs/");
  for (const link of links) {
    assert.ok(shipped(deno.publish.include, link), `deno.json "publish" includes ${link}`);
    assert.ok(shipped(npmFiles, link), `the npm package's files include ${link}`);
  }
});

test("every manifest, the lock file and the runtime say one version", () => {
  // deno.json is the source the npm build reads; each other place must say the same.
  const version = json("deno.json").version;
  assert.match(version, /^\d+\.\d+\.\d+$/);
  const lock = json("package-lock.json");
  const said: Record<string, string | undefined> = {
    "jsr.json": json("jsr.json").version,
    "package.json": json("package.json").version,
    "package-lock.json": lock.version,
    'package-lock.json packages[""]': lock.packages[""].version,
    "the npm manifest": npmManifest(json("deno.json"), json("package.json")).version as string,
    "src/version.ts": VERSION,
    "sdk/python/pyproject.toml": /^version = "([^"]*)"$/m.exec(read("sdk/python/pyproject.toml"))
      ?.[1],
    "sdk/python/rateguard_client/__init__.py": /^__version__ = "([^"]*)"$/m.exec(
      read("sdk/python/rateguard_client/__init__.py"),
    )?.[1],
  };
  for (const [where, v] of Object.entries(said)) assert.equal(v, version, where);
  // A release's changelog heading carries its version and date (Keep a Changelog).
  const changelog = readFileSync("CHANGELOG.md", "utf8");
  assert.match(
    changelog,
    new RegExp(`^## \\[${version.replaceAll(".", "\\.")}\\] — \\d{4}-\\d{2}-\\d{2}$`, "m"),
  );
});

test("the sidecar is an entry point, run only as the main module", () => {
  const deno = json("deno.json");
  assert.equal(deno.exports["./cli"], "./cli.ts", "JSR users run jsr:@rateguard/guard/cli");
  const cli = readFileSync("cli.ts", "utf8");
  assert.match(cli, /^export async function main\(/m, "the npm bin calls main()");
  assert.match(cli, /import\.meta\.main/, "importing it starts nothing");
  assert.ok(cli.includes("deno run -A jsr:@rateguard/guard/cli --limit 1000/min"));
  assert.ok(cli.includes("deno install -g -A -n rateguard jsr:@rateguard/guard/cli"));
});

test("the published npm manifest has deno.json's entry points, compiled, and only optional peers", () => {
  // The root package.json is the development manifest; what npm publishes
  // is generated from deno.json (scripts/npm_package.ts) and must keep up.
  const deno = json("deno.json");
  const root = json("package.json");
  assert.equal(root.private, true, "the development manifest cannot be published by mistake");
  const npm = npmManifest(deno, root);
  assert.equal(npm.private, undefined);
  assert.deepEqual(npm.publishConfig, { access: "public" });
  assert.deepEqual([npm.name, npm.version, npm.license], [deno.name, deno.version, deno.license]);
  const exports = npm.exports as Record<string, { types: string; import: string }>;
  assert.deepEqual(Object.keys(exports), Object.keys(deno.exports));
  for (const [subpath, source] of Object.entries(deno.exports as Record<string, string>)) {
    const stem = source.replace(/^\.\//, "./dist/").replace(/\.ts$/, "");
    assert.deepEqual(exports[subpath], { types: `${stem}.d.ts`, import: `${stem}.js` }, subpath);
  }
  assert.deepEqual(npm.bin, { rateguard: "bin/rateguard.js" });
  // Every dependency is a peer, and so is each framework only a subpath
  // adapts (Express), which the root manifest lists as a peer already.
  const peers = { ...root.dependencies, ...root.peerDependencies };
  assert.deepEqual(npm.peerDependencies, peers, "every dependency is a peer");
  assert.deepEqual(Object.keys(PEERS).sort(), Object.keys(peers).sort());
  for (const peer of Object.keys(PEERS)) {
    assert.deepEqual((npm.peerDependenciesMeta as Record<string, unknown>)[peer], {
      optional: true,
    }, peer);
  }
  assert.equal(npm.dependencies, undefined, "a user of the bare guard installs nothing else");
});

test("the README's test command is what CI runs", () => {
  const readme = readFileSync("README.md", "utf8");
  const ci = readFileSync(".ci/run", "utf8");
  const command = "npm ci && npm test";
  assert.ok(
    readme.split("\n").includes(command),
    "README shows the test command on a line of its own",
  );
  assert.ok(ci.split("\n").includes(command), ".ci/run runs it");
  assert.ok(
    readme.includes("npm ci && exec node_modules/.bin/deno run -A cli.ts --limit 1000/min"),
    "README shows the start command",
  );
});

/** Whether `version` (x.y.z) meets a node-semver range of `>=`, `^`, `||` and bare versions. */
function admits(range: string, version: string): boolean {
  const v = version.split(".").map(Number);
  const cmp = (a: number[], b: number[]) => {
    for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0);
    return 0;
  };
  // node-semver lets an operator stand apart from its version (">= 0.6", as Express's own use).
  return range.replace(/(>=|\^)\s+/g, "$1").split("||").some((alt) =>
    alt.trim().split(/\s+/).every((part) => {
      const m = /^(>=|\^)?v?(\d+(?:\.\d+){0,2})$/.exec(part);
      assert.ok(m, `a range this test reads: ${JSON.stringify(part)} in ${range}`);
      const w = m[2].split(".").map(Number);
      if (m[1] === ">=") return cmp(v, w) >= 0;
      if (m[1] === "^") return v[0] === w[0] && cmp(v, w) >= 0;
      return cmp(v, w.concat([0, 0]).slice(0, 3)) === 0 || w.length < 3 && v[0] === w[0];
    })
  );
}

test("npm ci warns of nothing on the oldest Node that package.json admits", () => {
  const npm = json("package.json");
  const floor = /^>=(\d+\.\d+\.\d+)$/.exec(npm.engines.node)?.[1];
  assert.ok(floor, `engines.node is >=x.y.z, got ${npm.engines.node}`);
  const lock = json("package-lock.json");
  const allowed = npm.allowScripts ?? {};
  for (const [path, entry] of Object.entries<Record<string, unknown>>(lock.packages)) {
    if (path === "") continue;
    const engines = entry.engines as { node?: string } | undefined;
    if (engines?.node !== undefined) {
      assert.ok(admits(engines.node, floor), `${path} needs Node ${engines.node}, not ${floor}`);
    }
    // npm 11 skips an install script it has no word on, and says so on every install.
    const name = path.replace(/^.*node_modules\//, "");
    if (entry.hasInstallScript) assert.equal(allowed[name], true, `allowScripts approves ${name}`);
  }
});
