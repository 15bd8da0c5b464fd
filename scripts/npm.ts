/**
 * The npm package's command line (`npm run npm:build`, `npm run npm:size`):
 *
 * - `build`: compile into `build/npm/package` (see `scripts/npm_package.ts`);
 * - `pack`: build, then `npm pack` into `build/npm`, printing the tarball's path;
 * - `size`: build, pack, install the tarball alone into a fresh project and
 *   print the package's size and the bare guard's install footprint, the
 *   figures the README states.
 *
 * @module
 */

import process from "node:process";
import { bareFootprint, buildPackage, packPackage, sizeSentence } from "./npm_package.ts";

const command = process.argv[2];
if (command !== "build" && command !== "pack" && command !== "size") {
  process.stderr.write("usage: npm.ts build|pack|size\n");
  process.exit(2);
}
const pkg = buildPackage();
if (command === "build") {
  console.log(pkg);
} else {
  const packed = packPackage(pkg);
  if (command === "pack") {
    console.log(packed.tarball);
  } else {
    const bare = bareFootprint(packed.tarball);
    console.log(`${packed.tarball}: ${packed.files} files`);
    console.log(`installed alone: ${bare.packages.join(", ")}`);
    console.log(`README: The bare guard installs ${sizeSentence(packed, bare)}`);
  }
}
