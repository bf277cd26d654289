#!/usr/bin/env node
// validate.mjs FILE... - validate the Kubernetes objects of multi-document
// YAML files against the Kubernetes OpenAPI schema, as the npm package
// kubernetes-models (pinned in .ci/install-deps) compiles it.
//
// Each document is read as the API machinery reads YAML (YAML 1.1: `yes`
// and `on` are booleans, `0755` is octal; duplicate keys are errors), turned
// into JSON, matched by apiVersion and kind to one class:
//
//   v1                     Pod PodTemplate ConfigMap Service Secret ServiceAccount
//   apps/v1                Deployment
//   networking.k8s.io/v1   NetworkPolicy
//
// and checked with its .validate().  The schema does not forbid unknown
// fields (kubernetes-models accepts `readOnlyRootFileSystem` and drops
// nothing), but an API server under strict field validation, kubectl's
// default, refuses them; so every field is also looked up in the type
// declarations kubernetes-models ships for that same schema.  Two rules of
// the API server's own are checked as well: metadata.name is present and
// well formed, and a Deployment's selector matches its template's labels.
//
// Prints "FILE: doc N (Kind/name): ok" or "... : invalid" and one indented
// line per error.  Exit status: 0 every document valid, 1 any invalid or
// unreadable, 2 usage, or the npm packages missing (.ci/install-deps
// installs them into build/npm; OMNIBOX_NODE_MODULES names another
// node_modules).

import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const NM = resolve(process.env.OMNIBOX_NODE_MODULES || join(here, "../../build/npm/node_modules"));

const KINDS = {
	"v1": ["Pod", "PodTemplate", "ConfigMap", "Service", "Secret", "ServiceAccount"],
	"apps/v1": ["Deployment"],
	"networking.k8s.io/v1": ["NetworkPolicy"],
};

function modelFile(apiVersion, kind, ext) {
	return join(NM, "kubernetes-models", apiVersion, `${kind}.${ext}`);
}

// ---- unknown fields, from the .d.ts declarations of the same schema -------

const ifaces = new Map();

// iface(FILE): the first interface FILE declares, as a Map from property
// name to {ref, many} (ref: the .d.ts file of its type when that type is a
// declared interface, an array or a string-keyed map of one), or null for a
// type alias (Quantity, IntOrString, Time) or an empty interface: leaves.
function iface(file) {
	if (ifaces.has(file)) return ifaces.get(file);
	if (!existsSync(file)) throw new Error(`internal: no type declarations at ${file}`);
	const text = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
	const imports = new Map();
	for (const m of text.matchAll(/^import \{ (\w+) \} from "([^"]+)";$/gm)) {
		const spec = m[2];
		imports.set(m[1], spec.startsWith(".") ? join(dirname(file), spec.replace(/\.js$/, ".d.ts"))
			: join(NM, `${spec}.d.ts`));
	}
	const body = text.match(/^export interface \w+(?: extends [\w, ]+)? \{\n([\s\S]*?)^\}/m);
	if (!body && /^export interface /m.test(text)) throw new Error(`internal: cannot read the interface of ${file}`);
	let props = null;
	if (body) {
		props = new Map();
		for (const chunk of body[1].split(/^(?=    ")/m)) {
			const m = chunk.match(/^    "([^"]+)"\??: ([\s\S]*);\s*$/);
			if (!m) {
				if (chunk.trim()) throw new Error(`internal: cannot read ${file}: ${chunk.trim()}`);
				continue;
			}
			const type = m[2].replace(/\s+/g, " ");
			const t = type.match(/^(IIoK8s\w+)$/) || type.match(/^Array<(IIoK8s\w+)>$/) ||
				type.match(/^\{ \[key: string\]: (IIoK8s\w+); \}$/);
			let ref = null;
			if (t) {
				ref = imports.get(t[1]);
				if (!ref) throw new Error(`internal: ${file}: ${t[1]} is not imported`);
			}
			props.set(m[1], { ref, many: type.startsWith("Array<") ? "array" : type.startsWith("{") ? "map" : "" });
		}
	}
	// An interface without properties (FieldsV1, RawExtension) is free-form.
	if (props && !props.size) props = null;
	ifaces.set(file, props);
	return props;
}

function distance(a, b) {
	const d = Array.from({ length: a.length + 1 }, (_, i) => [i]);
	for (let j = 1; j <= b.length; j++) d[0][j] = j;
	for (let i = 1; i <= a.length; i++)
		for (let j = 1; j <= b.length; j++)
			d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
	return d[a.length][b.length];
}

function unknownFields(value, file, path, errors) {
	const props = iface(file);
	if (!props || value === null || typeof value !== "object" || Array.isArray(value)) return;
	for (const [key, v] of Object.entries(value)) {
		const p = props.get(key);
		if (!p) {
			const near = [...props.keys()].find((k) => k.toLowerCase() === key.toLowerCase()) ||
				[...props.keys()].find((k) => distance(k, key) <= 2);
			errors.push(`${path}/${key}: unknown field "${key}"${near ? ` (did you mean "${near}"?)` : ""}`);
			continue;
		}
		if (!p.ref || v === null) continue;
		if (p.many === "array" && Array.isArray(v)) v.forEach((e, i) => unknownFields(e, p.ref, `${path}/${key}/${i}`, errors));
		else if (p.many === "map" && typeof v === "object") {
			for (const [k, e] of Object.entries(v)) unknownFields(e, p.ref, `${path}/${key}/${k}`, errors);
		} else if (!p.many) unknownFields(v, p.ref, `${path}/${key}`, errors);
	}
}

// ---- the API server's own rules, beyond the schema ------------------------

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

function serverRules(obj, errors) {
	const name = obj.metadata?.name;
	if (typeof name !== "string" || name === "") {
		errors.push("/metadata/name: required");
	} else if (obj.kind === "Service" ? !(LABEL_1035.test(name) && name.length <= 63)
		: !(SUBDOMAIN.test(name) && name.length <= 253)) {
		errors.push(`/metadata/name: "${name}" is not a valid ${obj.kind === "Service" ? "DNS-1035 label" : "DNS-1123 subdomain"}`);
	}
	if (obj.kind === "Deployment") {
		const want = obj.spec?.selector?.matchLabels || {};
		const have = obj.spec?.template?.metadata?.labels || {};
		for (const [k, v] of Object.entries(want)) {
			if (have[k] !== v) errors.push(`/spec/selector/matchLabels/${k}: does not match the template's labels`);
		}
	}
}

// ---- reading and checking --------------------------------------------------

async function check(obj) {
	if (obj === null || typeof obj !== "object" || Array.isArray(obj)) return { label: "?", errors: ["not a mapping"] };
	const { apiVersion, kind } = obj;
	const label = `${kind ?? "?"}/${obj.metadata?.name ?? "?"}`;
	if (!KINDS[apiVersion]?.includes(kind)) {
		return { label, errors: [`unknown apiVersion/kind ${apiVersion}/${kind} (known: ${
			Object.entries(KINDS).map(([v, ks]) => ks.map((k) => `${v}/${k}`).join(" ")).join(" ")})`] };
	}
	const errors = [];
	const mod = await import(pathToFileURL(modelFile(apiVersion, kind, "js")).href);
	try {
		new mod[kind](obj).validate();
	} catch (e) {
		if (!Array.isArray(e.errors)) throw e;
		for (const err of e.errors) {
			const params = err.params?.allowedValues ? ` (${err.params.allowedValues.join(", ")})` : "";
			errors.push(`${err.instancePath || "/"}: ${err.message ?? err.keyword}${params}`);
		}
		if (!errors.length) errors.push(e.message);
	}
	unknownFields(obj, modelFile(apiVersion, kind, "d.ts"), "", errors);
	serverRules(obj, errors);
	return { label, errors: [...new Set(errors)] };
}

async function main(files) {
	if (!files.length || files.some((f) => f.startsWith("-"))) {
		console.error("usage: validate.mjs FILE...");
		return 2;
	}
	let YAML;
	try {
		YAML = (await import(pathToFileURL(join(NM, "yaml/dist/index.js")).href)).default;
		await import(pathToFileURL(join(NM, "kubernetes-models/v1/Pod.js")).href);
	} catch (e) {
		console.error(`validate.mjs: the npm packages are missing from ${NM} (run .ci/install-deps): ${e.message}`);
		return 2;
	}
	let bad = 0;
	for (const file of files) {
		let text;
		try {
			text = readFileSync(file, "utf8");
		} catch (e) {
			console.log(`${file}: ${e.message}`);
			bad++;
			continue;
		}
		const docs = YAML.parseAllDocuments(text, { version: "1.1", uniqueKeys: true, prettyErrors: true });
		if (!Array.isArray(docs) || !docs.length) {
			console.log(`${file}: no YAML document`);
			bad++;
			continue;
		}
		for (const [i, doc] of docs.entries()) {
			const where = `${file}: doc ${i + 1}`;
			if (doc.errors.length) {
				console.log(`${where}: not valid YAML`);
				for (const e of doc.errors) console.log(`  ${e.message.split("\n")[0].replace(/:$/, "")}`);
				bad++;
				continue;
			}
			// What the API receives: JSON (timestamps become strings).
			const obj = JSON.parse(JSON.stringify(doc.toJS({ maxAliasCount: 100 })) ?? "null");
			if (obj === null) {
				console.log(`${where}: empty document`);
				bad++;
				continue;
			}
			const { label, errors } = await check(obj);
			if (errors.length) {
				console.log(`${where} (${label}): invalid`);
				for (const e of errors) console.log(`  ${e}`);
				bad++;
			} else {
				console.log(`${where} (${label}): ok`);
			}
		}
	}
	return bad ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
