// Package httpclient is the HTTP engine behind k6/http: it runs a request
// described in plain Go on a VU's client, follows its redirects and
// digest or NTLM handshakes, and measures every hop in k6's phases, with
// k6's error codes and messages. It knows nothing of JavaScript: the
// binding (js/modules/http) converts a script's arguments into a Request
// and a Result into samples and a response object.
//
// Each VU has its own client (NewClient), so connections are reused
// within a VU only, and its own Lane, which carries its synchronous
// requests without allocating a context, a tracer or a timer for each.
// Plain-HTTP/1.1 requests run on http1's wire code, the others on
// net/http.
package httpclient
