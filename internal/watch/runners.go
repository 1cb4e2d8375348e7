package watch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/metronome-load/metronome/internal/restapi"
)

// runners are the instances' REST APIs, as k6-operator's starter and
// stopper reach them.
type runners struct {
	urls   []string
	client *http.Client
	// reached marks the runners that answered once: one that stops
	// answering afterwards has ended (its process is gone).
	reached []bool
}

func newRunners(urls []string) *runners {
	r := &runners{client: &http.Client{Timeout: 5 * time.Second}, reached: make([]bool, len(urls))}
	for _, u := range urls {
		r.urls = append(r.urls, strings.TrimRight(u, "/"))
	}
	return r
}

// state is what the runners' statuses say of the test.
type state struct {
	// started is set once a runner left the paused state.
	started bool
	// ended is set once every runner has ended or is gone after it was
	// reached.
	ended bool
}

// poll asks every runner for its status.
func (r *runners) poll(ctx context.Context) state {
	st := state{ended: true}
	for i, u := range r.urls {
		s, err := r.status(ctx, u)
		switch {
		case err != nil:
			if !r.reached[i] {
				st.ended = false
			}
		default:
			r.reached[i] = true
			if s >= restapi.StatusStarted {
				st.started = true
			}
			if s < restapi.StatusEnded {
				st.ended = false
			}
		}
	}
	return st
}

// answering returns the runners that still answer their status.
func (r *runners) answering(ctx context.Context) []string {
	var left []string
	for _, u := range r.urls {
		if _, err := r.status(ctx, u); err == nil {
			left = append(left, u)
		}
	}
	return left
}

func (r *runners) status(ctx context.Context, u string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u+"/v1/status", nil)
	if err != nil {
		return 0, err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Attributes restapi.Status `json:"attributes"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s/v1/status: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, fmt.Errorf("GET %s/v1/status: %v", u, err)
	}
	return body.Data.Attributes.Status, nil
}

// stopBody is k6-operator's stopper's PATCH.
const stopBody = `{"data":{"type":"status","id":"default","attributes":{"stopped":true}}}`

// stop sends every runner the stopper's PATCH. A runner that no longer
// answers has ended already; one that refuses is an error.
func (r *runners) stop(ctx context.Context) error {
	var errs []string
	for _, u := range r.urls {
		req, err := http.NewRequestWithContext(ctx, http.MethodPatch, u+"/v1/status", strings.NewReader(stopBody))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := r.client.Do(req)
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			errs = append(errs, fmt.Sprintf("%s answered %s", u, resp.Status))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("stopping the runners: %s", strings.Join(errs, "; "))
	}
	return nil
}
