package data_test

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/metronome-load/metronome/executor"
	"github.com/metronome-load/metronome/exitcode"
	_ "github.com/metronome-load/metronome/internal/js/modules/data"
	"github.com/metronome-load/metronome/js/jstest"
)

const script = `
import { SharedArray } from "k6/data";
const users = new SharedArray("users", function () {
	console.log("building");
	return [{ name: "ann", roles: ["a"] }, { name: "bob", roles: [] }, 3, "four"];
});
export default function () {
	const u = users[0];
	const names = [];
	for (const x of users) names.push(typeof x === "object" ? x.name : x);
	console.log(__VU, users.length, names.join(","), users.map((x) => typeof x).join(","),
		users.filter((x) => typeof x === "object").length, users[9] === undefined, Array.isArray(users));
	let count = 0;
	users.forEach(() => count++);
	const frozen = Object.isFrozen(u) && Object.isFrozen(u.roles);
	let err = "";
	try { users[0] = 1; } catch (e) { err += e.name + ";"; }
	try { users.push(5); } catch (e) { err += e.name + ";"; }
	try { u.name = "eve"; } catch (e) { err += e.name + ";"; }
	console.log(__VU, count, frozen, err, users[0].name);
}`

func TestSharedArray(t *testing.T) {
	r := jstest.Load(t, map[string]string{"script.js": script}, nil)
	var wg sync.WaitGroup
	for id := uint64(1); id <= 4; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := r.Script.NewVU(context.Background(), id, nil)
			if err != nil {
				t.Error(err)
				return
			}
			if res := jstest.Iterate(v); res.Outcome != executor.Completed {
				t.Errorf("VU %d: outcome %v", id, res.Outcome)
			}
		}()
	}
	wg.Wait()
	out := regexp.MustCompile(`\[\d{4}\]`).ReplaceAllString(r.Stderr.String(), "[0000]")
	if n := strings.Count(out, "building"); n != 1 {
		t.Fatalf("the array was built %d times:\n%s", n, out)
	}
	for _, id := range []string{"1", "2", "3", "4"} {
		if !strings.Contains(out, "INFO[0000] "+id+" 4 ann,bob,3,four object,object,number,string 2 true true source=console") {
			t.Errorf("VU %s read the array wrong:\n%s", id, out)
		}
		if !strings.Contains(out, "INFO[0000] "+id+" 4 true TypeError;TypeError;TypeError; ann source=console") {
			t.Errorf("VU %s could change the array:\n%s", id, out)
		}
	}
}

func TestSharedArrayErrors(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{`const a = new SharedArray("", () => []);`, "non-empty name"},
		{`const a = new SharedArray("x", () => ({}));`, "must return an array"},
		{`const a = new SharedArray("x", 5);`, "needs a function"},
		{`const a = new SharedArray("x", () => { throw new Error("no data"); });`, "script.js:2:46: Error: no data"},
	} {
		_, err := jstest.TryLoad(t, map[string]string{
			"script.js": "import { SharedArray } from \"k6/data\";\n" + tc.script + "\nexport default function () {}",
		}, nil)
		if err == nil || exitcode.Of(err) != exitcode.ScriptException || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.script, err, tc.want)
		}
	}

	r := jstest.Load(t, map[string]string{
		"script.js": "import { SharedArray } from \"k6/data\";\nexport default function () { new SharedArray(\"late\", () => []); }",
	}, nil)
	vu, _ := r.NewVU(t, 1)
	if res := jstest.Iterate(vu); res.Outcome != executor.Failed || !strings.Contains(r.Stderr.String(), "init context") {
		t.Fatalf("outside init: %v: %s", res.Outcome, r.Stderr)
	}
}
