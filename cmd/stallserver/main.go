// Command stallserver serves HTTP on loopback and freezes every handler on
// a schedule, as a target for watching coordinated omission:
//
//	stallserver -addr 127.0.0.1:8080 -stall 500ms -every 5s -first 2s
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/metronome-load/metronome/internal/stallserver"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "loopback address to listen on")
	var s stallserver.Schedule
	flag.DurationVar(&s.Length, "stall", 0, "how long each stall lasts (0: never stall)")
	flag.DurationVar(&s.Period, "every", 0, "time between the starts of two stalls (0: stall once)")
	flag.DurationVar(&s.First, "first", 0, "when the first stall starts, after the server starts")
	flag.BoolVar(&s.Once, "once", false, "stall only once")
	flag.Parse()

	srv := stallserver.New(s)
	if err := srv.Start(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "stallserver:", err)
		os.Exit(2)
	}
	fmt.Printf("stallserver listening on %s (stall %s every %s, first at %s)\n", srv.URL(), s.Length, s.Period, s.First)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	<-sig
	_ = srv.Close()
}
