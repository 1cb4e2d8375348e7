package compat

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// lokiPushes are the bodies and headers the stand-in Loki got, by the key
// of the push URL /loki/{mode}/{key}/push a script's --log-output names.
var lokiPushes = struct {
	sync.Mutex
	by map[string][]lokiPush
}{by: map[string][]lokiPush{}}

// lokiPush is one push the stand-in Loki got.
type lokiPush struct {
	contentType, org string
	body             []byte
}

// serveLoki is the stand-in Loki: mode ok answers 204, fail 500 with the
// body "boom", hang holds the push until the pusher gives up (10 s at
// most); ok and fail record what they got.
func serveLoki(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	switch r.PathValue("mode") {
	case "hang":
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
		return
	case "fail":
		defer func() { w.WriteHeader(http.StatusInternalServerError); io.WriteString(w, "boom") }()
	default:
		defer w.WriteHeader(http.StatusNoContent)
	}
	lokiPushes.Lock()
	defer lokiPushes.Unlock()
	key := r.PathValue("key")
	lokiPushes.by[key] = append(lokiPushes.by[key], lokiPush{r.Header.Get("Content-Type"), r.Header.Get("X-Org"), body})
}

// lokiKey finds the stand-in Loki's key in a script's arguments.
var lokiKey = regexp.MustCompile(`/loki/[a-z]+/([^/]+)/push`)

// lokiSending is the error of a failed push in k6's stderr and
// metronome's, reduced to what both say.
var lokiSending = regexp.MustCompile(`Error while sending logs to loki.*(got \d+ from loki: \w+|Client\.Timeout exceeded)`)

// takeLoki reduces what the stand-in Loki got for the script's key, and
// forgets it: one line per pushed value, "{labels} n. line" with n its
// place in its stream over all pushes, a "content-type" and an "x-org"
// line, and "bad time" for a time that is not a 19-digit count of
// nanoseconds later than its stream's previous; and the error line of a
// failed push.
func takeLoki(args []string, stderr string) []string {
	var key string
	for _, a := range args {
		if m := lokiKey.FindStringSubmatch(a); m != nil {
			key = m[1]
		}
	}
	if key == "" {
		return nil
	}
	lokiPushes.Lock()
	pushes := lokiPushes.by[key]
	delete(lokiPushes.by, key)
	lokiPushes.Unlock()
	out := map[string]bool{}
	count, last := map[string]int{}, map[string]string{}
	for _, p := range pushes {
		out["content-type "+p.contentType] = true
		out["x-org "+p.org] = true
		var push struct {
			Streams []struct {
				Stream map[string]string `json:"stream"`
				Values [][2]string       `json:"values"`
			} `json:"streams"`
		}
		if err := json.Unmarshal(p.body, &push); err != nil {
			out["not JSON: "+err.Error()] = true
			continue
		}
		for _, s := range push.Streams {
			var labels []string
			for _, k := range slices.Sorted(maps.Keys(s.Stream)) {
				labels = append(labels, k+"="+s.Stream[k])
			}
			id := "{" + strings.Join(labels, ",") + "}"
			for _, v := range s.Values {
				if len(v[0]) != 19 || v[0] < last[id] {
					out["bad time "+v[0]] = true
				}
				last[id] = v[0]
				count[id]++
				out[fmt.Sprintf("%s %d. %s", id, count[id], v[1])] = true
			}
		}
	}
	for _, m := range lokiSending.FindAllStringSubmatch(stderr, -1) {
		out["stderr: Error while sending logs to loki: "+m[1]] = true
	}
	return slices.Sorted(maps.Keys(out))
}
