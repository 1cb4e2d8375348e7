package compat

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// secretServer answers the url secret source of the secrets scripts
// (--secret-source=url=urlTemplate=${BASE}/secret/…/{key}). Values depend
// only on the key, so k6 and metronome fetch the same ones:
//
//	/secret/plain/{key}   the body "plain-KEY"
//	/secret/json/{key}    {"data": {"value": "json-KEY", "num": 5, "obj": {}}, "list": ["list-item"]}
//	/secret/auth/{key}    "auth-KEY" with the header Authorization: t0k, else 401
//	/secret/status/{code} that status
//	/secret/flaky/{key}   503 on a key's first request, "flaky-KEY" after
//	/secret/size/{n}      a body of n bytes
//	/secret/hits/{key}    how many requests named key so far
//	/secret/reset/{p}     forgets the requests of the keys that start with
//	                      p, so that each run of a script starts afresh
func secretServer() http.Handler {
	var mu sync.Mutex
	hits := map[string]int{}
	hit := func(key string) int {
		mu.Lock()
		defer mu.Unlock()
		hits[key]++
		return hits[key]
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/secret/plain/{key}", func(w http.ResponseWriter, r *http.Request) {
		hit(r.PathValue("key"))
		io.WriteString(w, "plain-"+r.PathValue("key"))
	})
	mux.HandleFunc("/secret/json/{key}", func(w http.ResponseWriter, r *http.Request) {
		hit(r.PathValue("key"))
		fmt.Fprintf(w, `{"data": {"value": %q, "num": 5, "obj": {}}, "list": ["list-item"]}`, "json-"+r.PathValue("key"))
	})
	mux.HandleFunc("/secret/auth/{key}", func(w http.ResponseWriter, r *http.Request) {
		hit(r.PathValue("key"))
		if r.Header.Get("Authorization") != "t0k" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		io.WriteString(w, "auth-"+r.PathValue("key"))
	})
	mux.HandleFunc("/secret/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		hit("status-" + r.PathValue("code"))
		code, err := strconv.Atoi(r.PathValue("code"))
		if err != nil || code < 200 || code > 599 {
			code = 400
		}
		w.WriteHeader(code)
		io.WriteString(w, "no secret here\n")
	})
	mux.HandleFunc("/secret/flaky/{key}", func(w http.ResponseWriter, r *http.Request) {
		if hit(r.PathValue("key")) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "flaky-"+r.PathValue("key"))
	})
	mux.HandleFunc("/secret/size/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		io.WriteString(w, strings.Repeat("s", min(max(n, 0), 1<<20)))
	})
	mux.HandleFunc("/secret/slow/{ms}", func(w http.ResponseWriter, r *http.Request) {
		ms, _ := strconv.Atoi(r.PathValue("ms"))
		select {
		case <-time.After(time.Duration(min(max(ms, 0), 5000)) * time.Millisecond):
			io.WriteString(w, "slow")
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/secret/reset/{prefix}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		for k := range hits {
			if strings.HasPrefix(k, r.PathValue("prefix")) {
				delete(hits, k)
			}
		}
	})
	mux.HandleFunc("/secret/hits/{key}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprint(w, hits[r.PathValue("key")])
	})
	return mux
}
