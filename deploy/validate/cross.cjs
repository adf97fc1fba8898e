// cross.cjs: checks a rendering's objects against each other, against the
// image (deploy/Dockerfile's last stage) and against cschedd --help. What
// the API server would accept but would not run as meant: a Service or a
// policy that selects no pod, a port name no container has, a volume or a
// Secret that is not there, a pod the restricted profile refuses, a
// read-only root with a path cschedd writes left unmounted.
"use strict";

const fs = require("node:fs");

const WORKLOADS = new Set(["StatefulSet", "Deployment", "DaemonSet", "ReplicaSet", "Job"]);
// Paths cschedd writes unless told otherwise (cschedd --help).
const CSCHEDD_DEFAULTS = { "--state-dir": "/var/lib/csched", "--socket": "/run/csched/csched.sock" };
// Time past --drain-timeout for leaving and closing the database.
const DRAIN_MARGIN_S = 10;

function matches(selector, labels) {
    return Object.entries(selector || {}).every(([k, v]) => (labels || {})[k] === v);
}

function podsOf(objects) {
    return objects.filter((o) => WORKLOADS.has(o.kind)).map((o) => ({
        owner: o,
        labels: (o.spec.template.metadata || {}).labels || {},
        spec: o.spec.template.spec,
    }));
}

function containersOf(spec) {
    return [...(spec.initContainers || []), ...(spec.containers || [])];
}

function portKnown(pods, port) {
    return pods.some((p) => containersOf(p.spec).some((c) =>
        (c.ports || []).some((cp) => (typeof port === "string" ? cp.name === port : cp.containerPort === port))));
}

function durationSeconds(text) {
    const m = String(text).match(/^(\d+)(ms|s|m)$/);
    if (!m) return null;
    return Number(m[1]) * { ms: 0.001, s: 1, m: 60 }[m[2]];
}

// The last stage of the Dockerfile: USER, EXPOSE and VOLUME.
function readImage(dockerfile) {
    const image = { user: null, group: null, ports: [], volumes: [] };
    if (!fs.existsSync(dockerfile)) return null;
    const text = fs.readFileSync(dockerfile, "utf8").replace(/\\\n/g, " ");
    for (const line of text.split("\n")) {
        const words = line.trim().split(/\s+/);
        const op = (words[0] || "").toUpperCase();
        if (op === "FROM") Object.assign(image, { user: null, group: null, ports: [], volumes: [] });
        if (op === "USER") [image.user, image.group] = words[1].split(":");
        if (op === "EXPOSE") image.ports.push(...words.slice(1).map((p) => Number(p.split("/")[0])));
        if (op === "VOLUME") {
            const rest = line.trim().slice(6).trim();
            image.volumes.push(...(rest.startsWith("[") ? JSON.parse(rest) : rest.split(/\s+/)));
        }
    }
    return image;
}

function argValue(args, flag) {
    const i = args.indexOf(flag);
    if (i >= 0 && i + 1 < args.length) return args[i + 1];
    const eq = args.find((a) => a.startsWith(flag + "="));
    return eq ? eq.slice(flag.length + 1) : undefined;
}

function checkSelectors(objects, pods, report) {
    for (const o of objects) {
        if (WORKLOADS.has(o.kind)) {
            const sel = o.spec.selector.matchLabels;
            if (!matches(sel, (o.spec.template.metadata || {}).labels)) {
                report(o, `selector ${JSON.stringify(sel)} does not match the pod template's labels`);
            }
            if (o.kind === "StatefulSet") {
                const svc = objects.find((s) => s.kind === "Service" && s.metadata.name === o.spec.serviceName);
                if (!svc) report(o, `serviceName ${o.spec.serviceName} names no Service here`);
                else if (svc.spec.clusterIP !== "None") report(o, `serviceName ${o.spec.serviceName} is not headless (clusterIP: None)`);
            }
        }
        if (o.kind === "Service" && o.spec.selector) {
            const selected = pods.filter((p) => matches(o.spec.selector, p.labels));
            if (selected.length === 0) {
                report(o, `selector ${JSON.stringify(o.spec.selector)} selects no pod`);
                continue;
            }
            for (const p of o.spec.ports || []) {
                const target = p.targetPort === undefined ? p.port : p.targetPort;
                if (!portKnown(selected, target)) {
                    report(o, `port ${p.name || p.port}: targetPort ${target} names no port of the pods it selects`);
                }
            }
        }
        if (o.kind === "PodDisruptionBudget" &&
            !pods.some((p) => matches(o.spec.selector.matchLabels, p.labels))) {
            report(o, `selector ${JSON.stringify(o.spec.selector.matchLabels)} selects no pod`);
        }
        if (o.kind === "NetworkPolicy") checkPolicy(o, pods, report);
    }
}

function checkPolicy(o, pods, report) {
    const own = pods.filter((p) => matches(o.spec.podSelector.matchLabels, p.labels));
    if (own.length === 0) {
        report(o, `podSelector ${JSON.stringify(o.spec.podSelector.matchLabels)} selects no pod`);
        return;
    }
    for (const rule of o.spec.ingress || []) {
        if (!rule.from) report(o, "an ingress rule without from admits every client");
        for (const p of rule.ports || []) {
            if (p.port !== undefined && !portKnown(own, p.port)) {
                report(o, `ingress port ${p.port} names no port of the pods it selects`);
            }
        }
    }
    for (const rule of o.spec.egress || []) {
        for (const p of rule.ports || []) {
            if (typeof p.port !== "string") continue;
            const peers = pods.filter((q) => (rule.to || []).some((t) =>
                t.podSelector && !t.namespaceSelector && matches(t.podSelector.matchLabels, q.labels)));
            if (!portKnown(peers, p.port)) report(o, `egress port ${p.port} names no port of the pods it reaches`);
        }
    }
}

// Volumes, Secrets and ConfigMaps a pod uses must exist.
function checkReferences(objects, pods, external, report) {
    const secrets = new Map(objects.filter((o) => o.kind === "Secret")
        .map((s) => [s.metadata.name, Object.keys({ ...s.data, ...s.stringData })]));
    for (const [name, keys] of Object.entries(external)) if (!secrets.has(name)) secrets.set(name, keys);
    const configMaps = new Map(objects.filter((o) => o.kind === "ConfigMap")
        .map((c) => [c.metadata.name, Object.keys({ ...c.data, ...c.binaryData })]));
    const need = (o, kind, table, name, key, where) => {
        if (!table.has(name)) report(o, `${where}: ${kind} ${name} is neither declared here nor one the operator makes (overlays.json)`);
        else if (key !== undefined && !table.get(name).includes(key)) report(o, `${where}: ${kind} ${name} has no key ${key}`);
    };
    for (const p of pods) {
        const o = p.owner;
        const volumes = new Map((p.spec.volumes || []).map((v) => [v.name, v]));
        const claims = new Set(((o.spec.volumeClaimTemplates) || []).map((c) => c.metadata.name));
        const mounted = new Set();
        for (const v of volumes.values()) {
            if (v.secret) {
                need(o, "Secret", secrets, v.secret.secretName, undefined, `volume ${v.name}`);
                for (const it of v.secret.items || []) need(o, "Secret", secrets, v.secret.secretName, it.key, `volume ${v.name}`);
            }
            if (v.configMap) need(o, "ConfigMap", configMaps, v.configMap.name, undefined, `volume ${v.name}`);
            if (v.hostPath) report(o, `volume ${v.name} is a hostPath, which the restricted profile refuses`);
        }
        for (const c of containersOf(p.spec)) {
            for (const m of c.volumeMounts || []) {
                mounted.add(m.name);
                if (!volumes.has(m.name) && !claims.has(m.name)) {
                    report(o, `container ${c.name} mounts volume ${m.name}, which the pod does not declare`);
                }
            }
            for (const e of c.env || []) {
                const ref = (e.valueFrom || {}).secretKeyRef;
                if (ref) need(o, "Secret", secrets, ref.name, ref.key, `container ${c.name} env ${e.name}`);
                const cm = (e.valueFrom || {}).configMapKeyRef;
                if (cm) need(o, "ConfigMap", configMaps, cm.name, cm.key, `container ${c.name} env ${e.name}`);
            }
            for (const f of c.envFrom || []) {
                if (f.secretRef) need(o, "Secret", secrets, f.secretRef.name, undefined, `container ${c.name} envFrom`);
                if (f.configMapRef) need(o, "ConfigMap", configMaps, f.configMapRef.name, undefined, `container ${c.name} envFrom`);
            }
            // A file an argument names under a Secret's mount is one of its keys.
            for (const a of c.args || []) {
                for (const m of c.volumeMounts || []) {
                    const v = volumes.get(m.name);
                    if (!v || !v.secret || !a.startsWith(m.mountPath + "/")) continue;
                    need(o, "Secret", secrets, v.secret.secretName, a.slice(m.mountPath.length + 1), `container ${c.name} argument ${a}`);
                }
            }
        }
        for (const name of [...volumes.keys(), ...claims]) {
            if (!mounted.has(name)) report(o, `volume ${name} is declared but no container mounts it`);
        }
    }
}

// The restricted Pod Security Standard, as the API server's admission checks it.
function checkRestricted(pods, report) {
    for (const p of pods) {
        const ps = p.spec.securityContext || {};
        if (p.spec.hostNetwork || p.spec.hostPID || p.spec.hostIPC) report(p.owner, "uses the host's namespaces");
        for (const c of containersOf(p.spec)) {
            const cs = c.securityContext || {};
            const where = `container ${c.name}`;
            if (!(cs.runAsNonRoot ?? ps.runAsNonRoot)) report(p.owner, `${where}: runAsNonRoot is not true`);
            if ((cs.runAsUser ?? ps.runAsUser) === 0) report(p.owner, `${where}: runs as uid 0`);
            if (cs.allowPrivilegeEscalation !== false) report(p.owner, `${where}: allowPrivilegeEscalation is not false`);
            if (cs.privileged) report(p.owner, `${where}: is privileged`);
            if (!((cs.capabilities || {}).drop || []).includes("ALL")) report(p.owner, `${where}: does not drop ALL capabilities`);
            const seccomp = ((cs.seccompProfile || ps.seccompProfile) || {}).type;
            if (seccomp !== "RuntimeDefault" && seccomp !== "Localhost") report(p.owner, `${where}: seccompProfile is not RuntimeDefault`);
        }
    }
}

// The cschedd container against the image and cschedd itself.
function checkCschedd(pods, image, help, report) {
    for (const p of pods) {
        for (const c of p.spec.containers.filter((x) => x.name === "cschedd")) {
            const o = p.owner, where = `container ${c.name}`;
            const args = c.args || [];
            const sc = { ...(p.spec.securityContext || {}), ...(c.securityContext || {}) };
            if (image) {
                if (/^\d+$/.test(image.user || "")) {
                    if (sc.runAsUser !== undefined && String(sc.runAsUser) !== image.user) {
                        report(o, `${where}: runAsUser ${sc.runAsUser} is not the image's USER ${image.user}`);
                    }
                    if (image.group && sc.runAsGroup !== undefined && String(sc.runAsGroup) !== image.group) {
                        report(o, `${where}: runAsGroup ${sc.runAsGroup} is not the image's group ${image.group}`);
                    }
                } else if (sc.runAsUser === undefined) {
                    report(o, `${where}: the image's USER ${image.user} is not numeric, so runAsNonRoot needs runAsUser`);
                }
                for (const port of c.ports || []) {
                    if (!image.ports.includes(port.containerPort)) {
                        report(o, `${where}: containerPort ${port.containerPort} is not one the image EXPOSEs (${image.ports.join(", ")})`);
                    }
                }
            }
            const listen = argValue(args, "--listen");
            if (listen && !(c.ports || []).some((x) => x.containerPort === Number(listen.split(":").pop()))) {
                report(o, `${where}: --listen ${listen} is on no declared containerPort`);
            }
            if (sc.readOnlyRootFilesystem) {
                const socket = argValue(args, "--socket") || CSCHEDD_DEFAULTS["--socket"];
                const writes = new Set([argValue(args, "--state-dir") || CSCHEDD_DEFAULTS["--state-dir"],
                    socket.slice(0, socket.lastIndexOf("/")), "/tmp", ...((image && image.volumes) || [])]);
                const mounts = (c.volumeMounts || []).filter((m) => !m.readOnly).map((m) => m.mountPath);
                for (const w of writes) {
                    if (!mounts.some((m) => w === m || w.startsWith(m + "/"))) {
                        report(o, `${where}: the root file system is read-only and cschedd writes ${w}, where nothing writable is mounted`);
                    }
                }
            }
            const drain = durationSeconds(argValue(args, "--drain-timeout") || "25s");
            const grace = p.spec.terminationGracePeriodSeconds ?? 30;
            if (drain !== null && grace < drain + DRAIN_MARGIN_S) {
                report(o, `terminationGracePeriodSeconds ${grace} does not cover --drain-timeout (${drain} s) plus ${DRAIN_MARGIN_S} s to leave`);
            }
            if (help) {
                const used = [...args.filter((a) => a.startsWith("--")).map((a) => a.split("=")[0]),
                    ...(c.env || []).map((e) => e.name).filter((n) => n.startsWith("CSCHED_"))];
                for (const u of used) {
                    if (!new RegExp(`(^|[\\s\\[])${u.replace(/[-]/g, "\\-")}\\b`, "m").test(help)) {
                        report(o, `${where}: ${u} is not among what cschedd --help lists`);
                    }
                }
            }
        }
    }
}

function crossCheck(objects, { external, help, image, report }) {
    const pods = podsOf(objects);
    checkSelectors(objects, pods, report);
    checkReferences(objects, pods, external, report);
    checkRestricted(pods, report);
    checkCschedd(pods, readImage(image.dockerfile), help, report);
}

module.exports = { crossCheck };
