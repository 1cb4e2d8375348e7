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
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/metronome-load/metronome/internal/testkit/grpctest"
)

// startProto starts the corpus server with the protocol endpoints of the
// k6/ws, k6/websockets and k6/net/grpc scripts added to mux (see
// protoHandler) over cleartext HTTP/1.1 and HTTP/2, all on one address so
// that the HOST normalisation of the observations covers their URLs too.
func startProto(mux *http.ServeMux) *httptest.Server {
	srv := httptest.NewUnstartedServer(protoHandler(mux))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	return srv
}

// protoHandler adds to mux a WebSocket echo at /ws, and serves the Greeter
// gRPC service (with reflection; its Stall method answers after grpcStall,
// long enough for a scenario's hard stop to cut it off) and
// grpc.health.v1's Health (the server
// and metronome.test.Greeter SERVING, "down" NOT_SERVING, any other
// service unknown) to HTTP/2 requests of gRPC's content type.
func protoHandler(mux *http.ServeMux) http.Handler {
	mux.HandleFunc("/ws", wsEcho)
	greeter, err := grpctest.Start(func(func()) {}) // lives as long as the test process
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat: gRPC server:", err)
		os.Exit(1)
	}
	greeter.SetStall(func(time.Time) time.Duration { return grpcStall })
	hs := health.NewServer()
	hs.SetServingStatus("metronome.test.Greeter", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)
	healthSrv := grpc.NewServer()
	healthpb.RegisterHealthServer(healthSrv, hs)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			if strings.HasPrefix(r.URL.Path, "/grpc.health.v1.Health/") {
				healthSrv.ServeHTTP(w, r)
				return
			}
			greeter.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
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
