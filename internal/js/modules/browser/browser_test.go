package browser_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/metronome-load/metronome/config"
	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/js/jstest"
	"github.com/metronome-load/metronome/metrics"

	_ "github.com/metronome-load/metronome/internal/js/modules/browser"
	_ "github.com/metronome-load/metronome/js/modules/k6"
)

// needChromium skips a test on a machine without Chromium.
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		t.Skip("no Chromium at /usr/bin/chromium; CI installs it (.ci/run)")
	}
}

// site serves the test's pages on loopback: a form, a second page, a
// slow image and a page whose layout shifts.
func site(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	html := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, body)
		}
	}
	mux.HandleFunc("/favicon.ico", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) })
	mux.HandleFunc("/", html(`<!doctype html><html><head><title>Form</title></head><body>
<h1 id="h">Hello</h1>
<label for="name">Your name</label><input id="name" placeholder="Name here">
<input type="checkbox" id="agree" aria-label="Agree">
<select id="color"><option value="r">Red</option><option value="g">Green</option></select>
<button id="go" onclick="document.getElementById('h').textContent = 'Hi ' + document.getElementById('name').value">Greet</button>
<ul><li>one</li><li>two</li><li>three</li></ul>
<a href="/two">Next page</a>
<p data-testid="hidden" style="display:none">secret</p>
</body></html>`))
	mux.HandleFunc("/two", html(`<!doctype html><html><head><title>Two</title></head><body><p id="p">second page</p><img src="/slow.png" width="10" height="10"></body></html>`))
	mux.HandleFunc("/slow.png", func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(200 * time.Millisecond)
		w.WriteHeader(http.StatusNotFound)
	})
	mux.HandleFunc("/stall", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	})
	mux.HandleFunc("/shift", html(`<!doctype html><html><body><p>text above</p><div id="d" style="height:50px"></div><p style="font-size:40px">shifting content here</p>
<script>setTimeout(() => { document.getElementById("d").style.height = "400px"; }, 300);</script></body></html>`))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// browserOptions are options with one scenario, "ui", that asks for
// Chromium as k6 requires.
func browserOptions(t *testing.T, withType bool) *config.Options {
	t.Helper()
	sc := map[string]any{"executor": "shared-iterations"}
	if withType {
		sc["options"] = map[string]any{"browser": map[string]any{"type": "chromium"}}
	}
	raw, err := json.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	return &config.Options{Scenarios: map[string]json.RawMessage{"ui": raw}}
}

func run(t *testing.T, script string, withType bool, env map[string]string) *jstest.Runner {
	t.Helper()
	r := jstest.Load(t, map[string]string{"script.js": script}, &jstest.Config{Env: env, Options: browserOptions(t, withType)})
	v, _ := r.NewVU(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res := v.Run(ctx, executor.Iteration{Scenario: &executor.Scenario{Name: "ui"}})
	if res.Outcome != executor.Completed {
		t.Fatalf("outcome %v: %s", res.Outcome, r.Stderr.String())
	}
	return r
}

// The first slice of k6/browser: a page is opened, navigated, a locator
// found and clicked, its text read and the page closed; the browser's
// requests become browser_* samples tagged as k6 tags them.
func TestPageGotoClickText(t *testing.T) {
	needChromium(t)
	srv := site(t)
	r := run(t, `
import { browser } from "k6/browser";
export default async function () {
	const page = await browser.newPage();
	try {
		const res = await page.goto(__ENV.URL + "/");
		await page.locator("#name").fill("Ada");
		await page.locator("#go").click();
		const text = await page.locator("#h").textContent();
		console.log("text=" + text, "status=" + res.status(), "title=" + await page.title(), "url=" + page.url());
	} finally {
		await page.close();
	}
}`, true, map[string]string{"URL": srv.URL})
	out := r.Stderr.String()
	for _, want := range []string{"text=Hi Ada", "status=200", "title=Form", "url=" + srv.URL + "/"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	doc := srv.URL + "/"
	var sawDoc, sawFavicon bool
	for _, s := range r.Sent.Samples() {
		url, _ := s.Tags.Get("url")
		status, _ := s.Tags.Get("status")
		switch s.Metric.Name {
		case "browser_http_req_duration":
			if url == doc {
				sawDoc = true
				rt, _ := s.Tags.Get("resource_type")
				name, _ := s.Tags.Get("name")
				if rt != "Document" || status != "200" || name != doc || s.Value <= 0 {
					t.Errorf("document sample %v tags %s", s.Value, s.Tags)
				}
			}
		case "browser_http_req_failed":
			if strings.HasSuffix(url, "/favicon.ico") {
				sawFavicon = true
				if s.Value != 1 || status != "404" {
					t.Errorf("favicon's 404 is a failure: %v %s", s.Value, s.Tags)
				}
			}
		}
	}
	if !sawDoc || !sawFavicon {
		t.Errorf("samples lack the document (%v) or the favicon's failure (%v): %s", sawDoc, sawFavicon, tally(r.Sent.Samples()))
	}
}

func tally(ss []metrics.Sample) string {
	n := map[string]int{}
	for _, s := range ss {
		n[s.Metric.Name]++
	}
	return fmt.Sprint(n)
}

// The wider API on one page: role, text, label, placeholder and test-id
// locators, check, selectOption, nth/first/last/count, $ and $$, evaluate,
// screenshot bytes and file, navigation by click with waitForNavigation,
// and k6's error words for a timeout, a second context and a detached
// element handle.
func TestPageAPI(t *testing.T) {
	needChromium(t)
	srv := site(t)
	shot := t.TempDir() + "/shots/a.png"
	r := run(t, `
import { browser } from "k6/browser";
const log = [];
const say = (k, v) => log.push(k + "=" + v);
const err = async (k, f) => { try { await f(); say(k, "no error"); } catch (e) { say(k, String(e)); } };
export default async function () {
	const page = await browser.newPage();
	try {
		await page.goto(__ENV.URL + "/");
		await page.getByPlaceholder("Name here").type("Bo");
		await page.getByLabel("Your name").press("End");
		await page.getByRole("button", { name: "Greet" }).click();
		say("h", await page.getByRole("heading").textContent());
		await page.getByRole("checkbox", { name: "Agree" }).check();
		say("checked", await page.locator("#agree").isChecked());
		say("select", JSON.stringify(await page.locator("#color").selectOption("g")));
		say("value", await page.locator("#color").inputValue());
		const li = page.locator("li");
		say("li", [await li.count(), await li.first().textContent(), await li.nth(1).textContent(), await li.last().innerText()].join("|"));
		say("text", await page.getByText("TWO").textContent());
		say("hidden", await page.getByTestId("hidden").isVisible());
		const items = await page.$$("li");
		say("$$", items.length);
		const h = await page.$("#h");
		say("$", await h.textContent());
		const ul = await page.$("ul");
		say("in", (await ul.$$("li")).length + ":" + await (await ul.$("li:nth-child(2)")).textContent() + ":" + (await ul.$("#h")));
		say("eval", await page.evaluate((a) => a.x + document.querySelectorAll("li").length, { x: 10 }));
		const bytes = await page.screenshot({ path: __ENV.SHOT });
		say("png", String.fromCharCode(...new Uint8Array(bytes).slice(1, 4)));
		await err("timeout", () => page.locator("#nope").click({ timeout: 200 }));
		await err("second", () => browser.newPage());
		await page.evaluate(() => document.getElementById("h").remove());
		await err("detached", () => h.textContent());
		await err("refused", () => page.goto("http://127.0.0.1:1/"));
		await err("gone", () => ul.textContent());
		await page.goto(__ENV.URL + "/");
		await Promise.all([page.waitForNavigation(), page.getByRole("link", { name: "Next page" }).click()]);
		say("nav", page.url().endsWith("/two") + ":" + await page.title());
	} finally {
		await page.close();
	}
	console.log(log.join("\n"));
}`, true, map[string]string{"URL": srv.URL, "SHOT": shot})
	out := r.Stderr.String()
	for _, want := range []string{
		"h=Hi Bo", "checked=true", `select=["g"]`, "value=g", "li=3|one|two|three", "text=two", "hidden=false",
		"$$=3", "$=Hi Bo", "in=3:two:null", "eval=13", "png=PNG",
		`timeout=clicking on "#nope": timed out after 200ms`,
		"second=new page: existing browser context must be closed before creating a new one",
		"gone=getting text content of \"element\": element is not attached to the DOM",
		`refused=navigating page: navigating frame to "http://127.0.0.1:1/": net::ERR_UNSAFE_PORT`,
		"detached=", "element is not attached to the DOM", "nav=true:Two",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	if b, err := os.ReadFile(shot); err != nil || len(b) < 100 {
		t.Errorf("screenshot file: %d bytes, %v", len(b), err)
	}
}

// Without options.browser.type the module fails with k6's sentence.
func TestBrowserTypeRequired(t *testing.T) {
	r := run(t, `
import { browser } from "k6/browser";
export default async function () {
	try { await browser.newPage(); console.log("opened"); } catch (e) { console.log("ERR " + e); }
}`, false, nil)
	want := "ERR browser not found in registry. make sure to set browser type option in scenario definition in order to use the browser module"
	if !strings.Contains(r.Stderr.String(), want) {
		t.Fatalf("want %q in:\n%s", want, r.Stderr.String())
	}
}

// A layout shift after the first paint gives a CLS above zero, reported
// when the page closes, and the slow image's request its duration.
func TestWebVitals(t *testing.T) {
	needChromium(t)
	srv := site(t)
	r := run(t, `
import { browser } from "k6/browser";
export default async function () {
	const page = await browser.newPage();
	await page.goto(__ENV.URL + "/shift");
	await page.waitForTimeout(600);
	await page.goto(__ENV.URL + "/two");
	await page.close();
}`, true, map[string]string{"URL": srv.URL})
	var cls, slow float64 = -1, -1
	var rating string
	for _, s := range r.Sent.Samples() {
		url, _ := s.Tags.Get("url")
		switch {
		case s.Metric.Name == "browser_web_vital_cls" && strings.HasSuffix(url, "/shift"):
			cls = s.Value
			rating, _ = s.Tags.Get("rating")
		case s.Metric.Name == "browser_http_req_duration" && strings.HasSuffix(url, "/slow.png"):
			slow = s.Value
		}
	}
	if cls <= 0 || rating == "" {
		t.Errorf("CLS of the shifting page %v (rating %q), want above 0; samples %s", cls, rating, tally(r.Sent.Samples()))
	}
	if slow < 200 {
		t.Errorf("the slow image took %v ms, want at least the server's 200", slow)
	}
}

// A context lives for one iteration, as in k6: a page left open does not
// stop the VU's next iteration from opening one, and browser.context() is
// null again there.
func TestContextPerIteration(t *testing.T) {
	needChromium(t)
	srv := site(t)
	r := jstest.Load(t, map[string]string{"script.js": `
import { browser } from "k6/browser";
export default async function () {
	const before = browser.context() === null;
	const page = await browser.newPage();
	await page.goto(__ENV.URL + "/two");
	console.log("iter " + __ITER + " fresh=" + before + " pages=" + browser.context().pages().length + " version=" + /^\d+\./.test(browser.version()));
}`}, &jstest.Config{Env: map[string]string{"URL": srv.URL}, Options: browserOptions(t, true)})
	v, _ := r.NewVU(t, 1)
	for i := 0; i < 2; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		res := v.Run(ctx, executor.Iteration{Scenario: &executor.Scenario{Name: "ui"}})
		cancel()
		if res.Outcome != executor.Completed {
			t.Fatalf("iteration %d: outcome %v: %s", i, res.Outcome, r.Stderr.String())
		}
	}
	for _, want := range []string{"iter 0 fresh=true pages=1 version=true", "iter 1 fresh=true pages=1 version=true"} {
		if !strings.Contains(r.Stderr.String(), want) {
			t.Errorf("want %q in:\n%s", want, r.Stderr.String())
		}
	}
}

// A navigation cut off by the iteration's interruption is charged to
// corrected_latency up to the cut, tagged outcome=interrupted; the one
// answered before it is recorded as a plain corrected_latency.
func TestGotoCutOffIsCharged(t *testing.T) {
	needChromium(t)
	srv := site(t)
	opts := browserOptions(t, true)
	opts.Scenarios = map[string]json.RawMessage{jstest.DefaultScenario.Name: opts.Scenarios["ui"]}
	r := jstest.Load(t, map[string]string{"script.js": `
import { browser } from "k6/browser";
export default async function () {
	const page = await browser.newPage();
	await page.goto(__ENV.URL + "/two");
	await page.goto(__ENV.URL + "/stall");
}`}, &jstest.Config{Env: map[string]string{"URL": srv.URL}, Options: opts})
	v, rec := r.NewVU(t, 1)
	// Long enough for Chromium to start and load /two on a loaded machine.
	if res := jstest.RunCut(v, 20*time.Second); res.Outcome != executor.Interrupted {
		t.Fatalf("outcome %v, want Interrupted: %s", res.Outcome, r.Stderr.String())
	}
	got := jstest.Tally(rec, "url", "outcome")
	if got["corrected_latency{url="+srv.URL+"/two}"] != 1 || got["corrected_latency{url="+srv.URL+"/stall,outcome=interrupted}"] != 1 {
		t.Errorf("corrected_latency: %v", got)
	}
}
