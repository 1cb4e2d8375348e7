package http

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// echo is what /echo answers: the request as the server saw it.
type echo struct {
	Method      string            `json:"method"`
	Path        string            `json:"path"`
	Body        string            `json:"body"`
	ContentType string            `json:"contentType"`
	Cookie      string            `json:"cookie"`
	Auth        string            `json:"auth"`
	Host        string            `json:"host"`
	Headers     map[string]string `json:"headers"`
}

const jsonDoc = `{"a":{"b":[1,{"c":"x"}]},"items":[{"name":"one"},{"name":"two"}],"n":3.5,"t":true,"z":null}`

// newServer starts a loopback server with the endpoints the tests use.
func newServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		e := echo{
			Method: r.Method, Path: r.URL.Path, Body: string(b),
			ContentType: r.Header.Get("Content-Type"), Cookie: r.Header.Get("Cookie"),
			Auth: r.Header.Get("Authorization"), Host: r.Host, Headers: map[string]string{},
		}
		for k := range r.Header {
			e.Headers[k] = r.Header.Get(k)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(e)
	})
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.PathValue("code"))
		w.WriteHeader(code)
		_, _ = w.Write([]byte("status " + r.PathValue("code")))
	})
	mux.HandleFunc("/redirect/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if n <= 0 {
			http.Redirect(w, r, "/echo", http.StatusFound)
			return
		}
		http.Redirect(w, r, "/redirect/"+strconv.Itoa(n-1), http.StatusFound)
	})
	mux.HandleFunc("/to/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.PathValue("code"))
		http.Redirect(w, r, "/echo", code)
	})
	mux.HandleFunc("/set-cookie", func(w http.ResponseWriter, r *http.Request) {
		for k, vs := range r.URL.Query() {
			http.SetCookie(w, &http.Cookie{Name: k, Value: vs[0], Path: "/", HttpOnly: true})
		}
		_, _ = w.Write([]byte("set"))
	})
	mux.HandleFunc("/set-cookie-redirect", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "hop", Value: "1", Path: "/"})
		http.Redirect(w, r, "/echo", http.StatusFound)
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(jsonDoc))
	})
	mux.HandleFunc("/bad-json", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("{not json"))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	mux.HandleFunc("/bin", func(w http.ResponseWriter, _ *http.Request) {
		b := make([]byte, 256)
		for i := range b {
			b[i] = byte(i)
		}
		_, _ = w.Write(b)
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i < 3; i++ {
			_, _ = w.Write([]byte(strings.Repeat("x", 1000)))
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/gzip", func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			_, _ = w.Write([]byte("plain"))
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		z := gzip.NewWriter(w)
		_, _ = z.Write([]byte("hello, compressed world"))
		_ = z.Close()
	})
	mux.HandleFunc("/multi", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Add("x-multi", "a")
		w.Header().Add("x-multi", "b")
		_, _ = w.Write([]byte("multi"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}
