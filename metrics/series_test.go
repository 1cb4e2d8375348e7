package metrics

import (
	"strconv"
	"testing"
	"time"
)

// Each distinct metric and tag set pair counts once, however many samples
// it gets: 300 URLs on two metrics are 600 series.
func TestSeriesSeen(t *testing.T) {
	reg := NewRegistry()
	a, err := reg.New("series_test_a", Counter, Default)
	if err != nil {
		t.Fatal(err)
	}
	b, err := reg.New("series_test_b", Trend, Time)
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(reg, EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := SeriesSeen()
	var keep []*TagSet // held, so that no set is collected and counted again
	for round := range 3 {
		var batch []Sample
		for i := range 300 {
			tags := EmptyTags.With("url", "http://series.test/"+strconv.Itoa(i))
			keep = append(keep, tags)
			batch = append(batch, Sample{Metric: a, Tags: tags, Time: time.Now(), Value: 1},
				Sample{Metric: b, Tags: tags, Time: time.Now(), Value: float64(round)})
		}
		e.Ingest(batch)
	}
	if got := SeriesSeen() - before; got != 600 {
		t.Errorf("%d series seen, want 600", got)
	}
	_ = keep
}
