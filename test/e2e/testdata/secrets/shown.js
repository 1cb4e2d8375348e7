// Two fetched secrets put everywhere a run can display a value: a URL's
// query, a tag's value, a request name, a group, a check, a log line, an
// iteration's error, a custom metric's name (the second secret is a valid
// metric name), a threshold's name, the setup data and handleSummary's
// file. test/e2e/secrets_test.go runs it with every local output on and
// looks for the secrets in all they write and serve.
import http from "k6/http";
import { check, group } from "k6";
import exec from "k6/execution";
import { Trend } from "k6/metrics";
import secrets from "k6/secrets";

const token = await secrets.get("token");
const trend = new Trend(await secrets.get("metric"), true);

export const options = {
	scenarios: {
		main: { executor: "constant-arrival-rate", rate: 10, timeUnit: "1s", duration: __ENV.DURATION, preAllocatedVUs: 2 },
	},
	thresholds: { [`http_req_duration{mytag:${token}}`]: ["p(95)<60000"] },
};

export function setup() {
	return { token };
}

export default function (data) {
	console.log("log " + data.token);
	group("group " + token, () => {
		const r = http.get(`${__ENV.TARGET}/?token=${token}`, { tags: { mytag: token } });
		http.get(`${__ENV.TARGET}/named`, { tags: { name: "named " + token } });
		check(r, { ["check " + token]: (r) => r.status === 200 });
		trend.add(r.timings.duration, { t: token });
	});
	if (exec.scenario.iterationInTest === 0) throw new Error("boom " + token);
}

export function handleSummary(data) {
	return { [__ENV.HS_FILE]: JSON.stringify(data), stdout: JSON.stringify(data.metrics) + "\n" };
}
