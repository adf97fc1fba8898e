// check.cjs: renders kustomize overlays and checks every object strictly.
//
//   node check.cjs --modules DIR --work DIR [--cschedd-help FILE] OVERLAY...
//
// For each OVERLAY (a directory with a kustomization.yaml, relative to the
// repository root, the working directory):
//   1. `kubectl kustomize` renders it (offline);
//   2. kubernetes-models' JSON schemas check types, formats and required
//      fields of every object;
//   3. tsc --strict over the objects as typed literals of kubernetes-types
//      refuses every field the API does not have (the schemas allow them);
//   4. the objects are checked against each other and against the image
//      (deploy/Dockerfile) and cschedd --help: cross.cjs.
// DIR (--modules) holds node_modules of package.json here; --work is where
// the TypeScript files go. Prints one line per problem and exits 1 if any.
"use strict";

const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const { crossCheck } = require("./cross.cjs");

function parseArgs(argv) {
    const opts = { overlays: [] };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        if (a === "--modules" || a === "--work" || a === "--cschedd-help") {
            opts[a.slice(2)] = argv[++i];
        } else if (a.startsWith("--")) {
            throw new Error(`unknown option ${a}`);
        } else {
            opts.overlays.push(a.replace(/\/+$/, ""));
        }
    }
    if (!opts.modules || !opts.work || opts.overlays.length === 0) {
        throw new Error("usage: check.cjs --modules DIR --work DIR [--cschedd-help FILE] OVERLAY...");
    }
    return opts;
}

const opts = parseArgs(process.argv.slice(2));
const requireDep = (name) => require(require.resolve(name, { paths: [opts.modules] }));
const YAML = requireDep("yaml");

function objName(o) {
    return `${o.kind}/${(o.metadata || {}).name}`;
}

// The model class of an object: apps/v1 StatefulSet -> kubernetes-models/apps/v1/StatefulSet.
function modelFor(o) {
    const dir = o.apiVersion.includes("/") ? o.apiVersion : `v1`;
    try {
        return requireDep(`kubernetes-models/${dir}/${o.kind}`)[o.kind];
    } catch {
        return null;
    }
}

// kustomize wraps long base64 values in a Secret's data; the API server's
// decoder (Go's) skips the newlines, the schema's "byte" format does not.
function unwrapData(o) {
    if (o.kind !== "Secret" || !o.data) return o;
    const data = Object.fromEntries(Object.entries(o.data).map(([k, v]) => [k, String(v).replace(/\s+/g, "")]));
    return { ...o, data };
}

function schemaCheck(objects, report) {
    for (const o of objects) {
        const Model = modelFor(o);
        if (!Model) {
            report(o, `no schema for ${o.apiVersion} ${o.kind}`);
            continue;
        }
        try {
            new Model(unwrapData(o)).validate();
        } catch (e) {
            for (const line of String(e.message).split(/\n|, (?=data)/)) {
                report(o, `schema: ${line.replace(/^data\//, "")}`);
            }
        }
    }
}

// kubernetes-types' module and type of an object: networking.k8s.io/v1 -> networking/v1.
function typeFor(o) {
    const [group, version] = o.apiVersion.includes("/") ? o.apiVersion.split("/") : ["core", o.apiVersion];
    return { module: `kubernetes-types/${group.split(".")[0]}/${version}`, type: o.kind };
}

// Writes value as TypeScript, one key a line, noting each line's field path.
function toTs(value, indent, pathNow, lines, paths) {
    const pad = "  ".repeat(indent);
    if (Array.isArray(value)) {
        lines[lines.length - 1] += "[";
        value.forEach((v, i) => {
            lines.push(pad + "  ");
            paths.push(`${pathNow}[${i}]`);
            toTs(v, indent + 1, `${pathNow}[${i}]`, lines, paths);
            lines[lines.length - 1] += ",";
        });
        lines.push(pad + "]");
        paths.push(pathNow);
    } else if (value !== null && typeof value === "object") {
        lines[lines.length - 1] += "{";
        for (const [k, v] of Object.entries(value)) {
            const p = pathNow ? `${pathNow}.${k}` : k;
            lines.push(`${pad}  ${JSON.stringify(k)}: `);
            paths.push(p);
            toTs(v, indent + 1, p, lines, paths);
            lines[lines.length - 1] += ",";
        }
        lines.push(pad + "}");
        paths.push(pathNow);
    } else {
        lines[lines.length - 1] += JSON.stringify(value);
    }
}

// Writes an overlay's objects as typed literals; tsc checks them all at once.
function writeTypedObjects(overlay, objects, report) {
    const file = path.join(opts.work, overlay.replace(/[^A-Za-z0-9]+/g, "_") + ".ts");
    const lines = [], paths = [], owner = [];
    const imports = new Map();
    objects.forEach((o, i) => {
        const t = typeFor(o);
        if (!imports.has(t.module)) imports.set(t.module, `t${imports.size}`);
        lines.push(`export const o${i}: ${imports.get(t.module)}.${t.type} = `);
        paths.push("");
        const start = lines.length - 1;
        toTs(o, 0, "", lines, paths);
        lines[lines.length - 1] += ";";
        for (let l = start; l < lines.length; l++) owner[l] = o;
    });
    const header = [...imports].map(([m, alias]) => `import type * as ${alias} from ${JSON.stringify(m)};`);
    fs.writeFileSync(file, [...header, ...lines].join("\n") + "\n");
    return { file, report, at: (line) => ({ o: owner[line - 1 - header.length], path: paths[line - 1 - header.length] }) };
}

// tsc --strict over every overlay's file; each error goes to its overlay.
function typeCheck(typed, report) {
    fs.writeFileSync(path.join(opts.work, "tsconfig.json"), JSON.stringify({
        compilerOptions: {
            strict: true, noEmit: true, skipLibCheck: true, module: "commonjs",
            moduleResolution: "node", typeRoots: [], types: [],
            baseUrl: ".", paths: { "kubernetes-types/*": [path.join(opts.modules, "node_modules/kubernetes-types/*")] },
        },
        files: typed.map((t) => path.basename(t.file)),
    }));
    const tsc = path.join(opts.modules, "node_modules/typescript/bin/tsc");
    let out;
    try {
        execFileSync(process.execPath, [tsc, "-p", opts.work, "--pretty", "false"], { encoding: "utf8" });
        return;
    } catch (e) {
        out = (e.stdout || "") + (e.stderr || "");
    }
    for (const line of out.split("\n").filter(Boolean)) {
        const m = line.match(/^(?:.*\/)?([^/(]+\.ts)\((\d+),\d+\): error TS\d+: (.*)$/);
        const t = m && typed.find((x) => path.basename(x.file) === m[1]);
        if (!t) {
            report(null, `tsc: ${line}`);
            continue;
        }
        const at = t.at(Number(m[2]));
        t.report(at.o || null, `${at.path || "(object)"}: ${m[3]}`);
    }
}

const config = JSON.parse(fs.readFileSync(path.join(__dirname, "overlays.json"), "utf8"));
const image = { dockerfile: "deploy/Dockerfile" };
const help = opts["cschedd-help"] ? fs.readFileSync(opts["cschedd-help"], "utf8") : null;
let failed = false;
const typed = [];
fs.mkdirSync(opts.work, { recursive: true });

for (const overlay of opts.overlays) {
    const report = (o, msg) => {
        failed = true;
        console.error(`${overlay}: ${o ? objName(o) + ": " : ""}${msg}`);
    };
    let text;
    try {
        text = execFileSync("kubectl", ["kustomize", overlay], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    } catch (e) {
        report(null, `kubectl kustomize failed: ${(e.stderr || e.message).trim()}`);
        continue;
    }
    const objects = YAML.parseAllDocuments(text).map((d) => d.toJS()).filter(Boolean);
    const external = config.external[overlay] ||
        config.external[Object.keys(config.external).find((k) => overlay.startsWith(k + "/"))] || {};
    schemaCheck(objects, report);
    typed.push(writeTypedObjects(overlay, objects, report));
    crossCheck(objects, { external, help, image, report });
    console.log(`${overlay}: ${objects.length} objects (${objects.map(objName).join(", ")})`);
}
if (typed.length > 0) {
    typeCheck(typed, (o, msg) => {
        failed = true;
        console.error(`tsc: ${msg}`);
    });
}
process.exit(failed ? 1 : 0);
