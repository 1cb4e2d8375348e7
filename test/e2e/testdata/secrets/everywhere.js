// A fetched secret put into every kind of message a run writes: a log
// line, a request URL (the url tag of the json and csv outputs), a check
// name (the summary, its export and the report), handleSummary's output,
// and, as W says, the message of exec.test.abort(), exec.test.fail(), a
// failing teardown or a failing handleSummary. test/e2e/secrets_test.go checks
// that the secret is masked in all of them.
import http from "k6/http";
import { check } from "k6";
import exec from "k6/execution";
import secrets from "k6/secrets";

export const options = { iterations: 1, vus: 1 };

export default async function () {
	const t = await secrets.get("apikey");
	console.log("log " + t);
	http.get(`${__ENV.TARGET}/?token=${t}`);
	check(1, { ["check " + t]: () => true });
	if (__ENV.W === "abort") exec.test.abort("abort " + t);
	if (__ENV.W === "fail") exec.test.fail("fail " + t);
}

export async function teardown() {
	if (__ENV.W === "teardown") throw new Error("teardown " + (await secrets.get("apikey")));
}

export async function handleSummary() {
	const t = await secrets.get("apikey");
	if (__ENV.W === "handleSummary") throw new Error("handleSummary " + t);
	return { stdout: "summary " + t, [__ENV.HS_FILE]: "file " + t };
}
