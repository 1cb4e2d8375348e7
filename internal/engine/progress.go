package engine

import (
	"fmt"
	"io"
	"time"

	"github.com/vbauerster/cupwriter"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/metronome-load/metronome/executor"
)

// progressBars is the live display: one bar per scenario, drawn only on a
// terminal. Each bar shows the scenario's elapsed and total time, its VUs
// and its iteration counts.
type progressBars struct {
	p    *mpb.Progress
	stop chan struct{}
	done chan struct{}
}

const progressScale = 1000

func startProgress(w io.Writer, runs []*scenarioRun) *progressBars {
	// The display redraws in place when w is a terminal, also when it is
	// one behind a wrapper (the writer that hides secrets): mpb only sees
	// through an *os.File by itself.
	cw := cupwriter.New(w, false)
	if f, ok := w.(interface{ Fd() uintptr }); ok {
		cw.SetTermFd(int(f.Fd()))
	}
	pb := &progressBars{
		p:    mpb.New(mpb.WithConsoleWriter(cw), mpb.WithAutoRefresh(), mpb.WithWidth(40), mpb.WithRefreshRate(200*time.Millisecond)),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	width := 0
	for _, r := range runs {
		width = max(width, len(r.cfg.Base().Name))
	}
	bars := make([]*mpb.Bar, len(runs))
	for i, r := range runs {
		r := r
		bars[i] = pb.p.AddBar(progressScale,
			mpb.PrependDecorators(decor.Name(r.cfg.Base().Name, decor.WC{W: width + 1, C: decor.DindentRight})),
			mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return progressText(r.progress()) })),
		)
	}
	go func() {
		defer close(pb.done)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			finished := true
			for i, r := range runs {
				pr := r.progress()
				cur := int64(progressScale)
				if !pr.Done && pr.Total > 0 {
					cur = min(int64(progressScale*pr.Elapsed/pr.Total), progressScale-1)
				}
				if !pr.Done {
					finished = false
				}
				bars[i].SetCurrent(cur)
			}
			if finished {
				return
			}
			select {
			case <-pb.stop:
				for i := range bars {
					bars[i].SetCurrent(progressScale)
				}
				return
			case <-t.C:
			}
		}
	}()
	return pb
}

func progressText(p executor.Progress) string {
	s := fmt.Sprintf("%s/%s  %d/%d VUs  %d complete, %d interrupted",
		p.Elapsed.Truncate(100*time.Millisecond), p.Total, p.ActiveVUs, p.MaxVUs, p.Completed, p.Interrupted)
	if p.Dropped > 0 {
		s += fmt.Sprintf(", %d dropped", p.Dropped)
	}
	if p.Backlog > 0 {
		s += fmt.Sprintf(", backlog %d", p.Backlog)
	}
	return s
}

// Stop completes every bar and waits for the display to finish drawing.
func (pb *progressBars) Stop() {
	close(pb.stop)
	<-pb.done
	pb.p.Wait()
}
