// Builds the console: the TypeScript types of proto/csched/v1 (protoc with
// protoc-gen-es), then one bundle with esbuild, into --out (default dist/).
//
//   node build.mjs [--out DIR] [--proto DIR] [--gen-only | --test]
//
// --test bundles test/*.test.ts for Node.js and runs them (node --test).
// Needs only Node.js 18 or newer and the packages of package-lock.json.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
};
const out = resolve(option("--out", join(here, "dist")));
const proto = resolve(option("--proto", join(here, "..", "..", "proto")));
const gen = join(here, "src", "gen");

rmSync(gen, { recursive: true, force: true });
mkdirSync(gen, { recursive: true });
execFileSync(
  "protoc",
  [
    `--plugin=protoc-gen-es=${join(here, "node_modules", ".bin", "protoc-gen-es")}`,
    `--es_out=${gen}`,
    "--es_opt=target=ts",
    `-I${proto}`,
    "csched/v1/scheduler.proto",
  ],
  { stdio: "inherit" },
);
if (args.includes("--gen-only")) process.exit(0);

const esbuild = await import("esbuild");
if (args.includes("--test")) {
  const tests = join(here, "test");
  const bundled = join(here, "test-out");
  rmSync(bundled, { recursive: true, force: true });
  const files = readdirSync(tests).filter((f) => f.endsWith(".test.ts"));
  await esbuild.build({
    entryPoints: files.map((f) => join(tests, f)),
    bundle: true,
    platform: "node",
    format: "esm",
    target: ["node18"],
    packages: "external",
    outdir: bundled,
    outExtension: { ".js": ".mjs" },
    logLevel: "warning",
  });
  execFileSync(process.execPath, ["--test", ...files.map((f) => join(bundled, f.replace(/\.ts$/, ".mjs")))], {
    stdio: "inherit",
  });
  process.exit(0);
}
/* Empty out, but keep the directory itself: a running cschedd serves from
 * it (--console-dir) and sees the new files without a restart. */
mkdirSync(out, { recursive: true });
for (const f of readdirSync(out)) rmSync(join(out, f), { recursive: true, force: true });
await esbuild.build({
  entryPoints: [join(here, "src", "main.tsx")],
  bundle: true,
  minify: true,
  target: ["es2020"],
  format: "esm",
  jsx: "automatic",
  jsxImportSource: "preact",
  outfile: join(out, "app.js"),
  logLevel: "warning",
});
cpSync(join(here, "src", "index.html"), join(out, "index.html"));
cpSync(join(here, "src", "style.css"), join(out, "style.css"));
cpSync(join(here, "src", "favicon.svg"), join(out, "favicon.svg"));
