package httpclient

import (
	"context"
	"net/http"
	"sync"
)

// Batch runs reqs concurrently, at most limit at a time overall and
// perHost at a time per host (0 means no limit), and returns once all
// are done; each request's outcome is its Result. Requests whose URL did
// not parse fail at once without taking a place.
func Batch(ctx context.Context, rt http.RoundTripper, reqs []*Request, limit, perHost int) {
	var all chan struct{}
	if limit > 0 {
		all = make(chan struct{}, limit)
	}
	hosts := map[string]chan struct{}{}
	var wg sync.WaitGroup
	for _, r := range reqs {
		if r.URL.URL == nil {
			Do(ctx, rt, r, nil)
			continue
		}
		var host chan struct{}
		if perHost > 0 {
			host = hosts[r.URL.URL.Host]
			if host == nil {
				host = make(chan struct{}, perHost)
				hosts[r.URL.URL.Host] = host
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if host != nil {
				host <- struct{}{}
				defer func() { <-host }()
			}
			if all != nil {
				all <- struct{}{}
				defer func() { <-all }()
			}
			Do(ctx, rt, r, nil)
		}()
	}
	wg.Wait()
}
