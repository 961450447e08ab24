// Wraps the core Wasm module into a component for the `remit-core` world and transpiles it
// with jco into an ES module with TypeScript declarations.
//
//   node wasm/build-component.mjs <core.wasm> <component.wasm> <pkg-dir>
//
// Steps: embed the WIT (componentEmbed), make the component (componentNew), transpile
// (jco transpile, JS API). The jco CLI's `embed` is not used: it panics reading the WIT path
// (docs/toolchain.md); the JS API works. Output is deterministic: no timestamps, no absolute paths.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { componentEmbed, componentNew, componentWit, transpile } from '@bytecodealliance/jco';

const here = dirname(fileURLToPath(import.meta.url));
const witPath = join(here, 'remit-core.wit');
const world = 'remit-core';
const bindingName = 'remit_core';

async function main() {
  const [corePath, componentPath, pkgDir] = process.argv.slice(2);
  if (!corePath || !componentPath || !pkgDir) {
    throw new Error('usage: node wasm/build-component.mjs <core.wasm> <component.wasm> <pkg-dir>');
  }
  const binary = new Uint8Array(await readFile(corePath));
  const witSource = await readFile(witPath, 'utf8');

  const embedded = await componentEmbed({ binary, witSource, world });
  const component = await componentNew(embedded);
  await mkdir(dirname(resolve(componentPath)), { recursive: true });
  await writeFile(componentPath, component);

  // The component must expose exactly the world's functions.
  const wit = await componentWit(component);
  for (const name of ['recover', 'admit', 'feed', 'admit-from', 'format-version']) {
    if (!wit.includes(`export ${name}: func`)) {
      throw new Error(`component WIT lacks export ${name}:\n${wit}`);
    }
  }

  const { files } = await transpile(component, {
    name: bindingName,
    instantiation: undefined, // instantiate on import; top-level functions
    noTypescript: false,
    quiet: true,
    tlaCompat: false,
    base64Cutoff: 0, // keep the core module as a separate .wasm file
  });
  await rm(pkgDir, { recursive: true, force: true });
  await mkdir(pkgDir, { recursive: true });
  for (const [name, bytes] of Object.entries(files)) {
    const target = join(pkgDir, name);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, bytes);
  }
  // wasm/package.json (@remit/core-wasm) makes pkg/ an ES module package and lists what ships.
  console.log(`component: ${componentPath} (${component.length} bytes); bindings: ${Object.keys(files).sort().join(', ')}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
