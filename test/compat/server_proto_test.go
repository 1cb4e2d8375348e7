package compat

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/metronome-load/metronome/internal/testkit/grpctest"
)

// startProto starts the corpus server with the protocol endpoints of the
// k6/ws, k6/websockets and k6/net/grpc scripts added to mux: a WebSocket
// echo at /ws and the Greeter gRPC service (with reflection) over
// cleartext HTTP/2, all on one address so that the HOST normalisation of
// the observations covers their URLs too. Greeter's Stall method answers
// after grpcStall, long enough for a scenario's hard stop to cut it off.
func startProto(mux *http.ServeMux) *httptest.Server {
	mux.HandleFunc("/ws", wsEcho)
	greeter, err := grpctest.Start(func(func()) {}) // lives as long as the test process
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat: gRPC server:", err)
		os.Exit(1)
	}
	greeter.SetStall(func(time.Time) time.Duration { return grpcStall })
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			greeter.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	return srv
}

// grpcStall is how long Greeter's Stall method takes to answer.
const grpcStall = 5 * time.Second

var wsUpgrader = websocket.Upgrader{Subprotocols: []string{"echo"}}

// wsEcho echoes every message in the kind it came, answers pings (the
// library's default) and the message "ping-me" with a ping of its own, and
// the message "close-me" by closing the session with code 4000.
func wsEcho(w http.ResponseWriter, r *http.Request) {
	c, err := wsUpgrader.Upgrade(w, r, http.Header{"X-Echo": {"yes"}})
	if err != nil {
		return
	}
	defer c.Close()
	var wmu sync.Mutex
	c.SetPingHandler(func(data string) error {
		wmu.Lock()
		defer wmu.Unlock()
		return c.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	for {
		kind, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		wmu.Lock()
		switch string(msg) {
		case "ping-me":
			err = c.WriteControl(websocket.PingMessage, []byte("srv"), time.Now().Add(time.Second))
		case "close-me":
			err = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4000, "bye"), time.Now().Add(time.Second))
		default:
			err = c.WriteMessage(kind, msg)
		}
		wmu.Unlock()
		if err != nil {
			return
		}
	}
}
