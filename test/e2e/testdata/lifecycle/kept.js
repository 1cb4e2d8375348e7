// Ten GETs in a row to each server of __ENV.TARGETS (name=url,...); after
// reading each answer the script asks __ENV.CONTROL to have the server
// leave something on the kept-alive connection (lifecycle_test.go). One
// console line per request.
import http from "k6/http";
import { sleep } from "k6";

export const options = { iterations: 1, vus: 1 };

export default function () {
  for (const pair of __ENV.TARGETS.split(",")) {
    const [name, url] = pair.split("=");
    for (let i = 0; i < 10; i++) {
      const r = http.get(`${url}/${i}`, { headers: { "X-Req": `${i}` }, timeout: "5s" });
      console.log(`lifecycle ${name} ${i} status=${r.status} code=${r.error_code} body=${(r.body || "").replace(/ /g, "_")} error=${r.error}`);
      http.get(`${__ENV.CONTROL}/${name}/${i}`);
      // k6 drops such a connection on its reader goroutine: give it the
      // time to run before the next request.
      sleep(0.1);
    }
  }
}
