// k6/secrets against two file sources; the console lines it prints were
// recorded from k6 v2.2.0 (k6.txt) and test/e2e/secrets_test.go compares them.
import secrets from "k6/secrets";

export const options = { iterations: 1, vus: 1 };

const early = await secrets.get("apikey");
console.log("init", early);

async function reason(p) {
	try {
		return "resolved " + (await p).length;
	} catch (e) {
		return "rejected " + e + " " + typeof e + " " + (e && e.name);
	}
}

export default async function () {
	const v = await secrets.get("apikey");
	console.log("value is " + v + " len " + v.length);
	console.log("other", await secrets.get("other"), "a s3cr3t-valueb");
	console.log("empty", JSON.stringify(await secrets.get("empty")));
	console.warn("warn " + v);
	console.log("keys", Object.keys(secrets).join(","), typeof secrets.source);
	console.log("missing", await reason(secrets.get("missing")));
	console.log("nosrc", await reason(secrets.source("nope").get("apikey")));
	console.log("more", await reason(secrets.source("more").get("apikey")));
	console.log("moreval", await secrets.source("more").get("apikey"));
	console.log("default", await reason(secrets.source("default").get("apikey")));
	console.log("unnamed", await reason(secrets.source().get("apikey")));
	throw new Error("boom " + v);
}
