package promtest

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/exp/api/remote"
	"github.com/prometheus/prometheus/prompb"
)

func TestDecodeHistogramResult(t *testing.T) {
	raw := `{"resultType":"vector","result":[{"metric":{"a":"b"},
		"histogram":[1700000000.5,{"count":"3","sum":"0.25","buckets":[[0,"0.1","0.2","2"],[3,"-0.001","0.001","1"]]}]}]}`
	r, err := decodeResult([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if r.Type != "vector" || len(r.Series) != 1 || len(r.Series[0].Points) != 1 {
		t.Fatalf("result %+v", r)
	}
	p := r.Series[0].Points[0]
	if p.H == nil || p.H.Count != 3 || p.H.Sum != 0.25 || len(p.H.Buckets) != 2 {
		t.Fatalf("histogram %+v", p.H)
	}
	if b := p.H.Buckets[1]; b.Boundaries != 3 || b.Lower != -0.001 || b.Upper != 0.001 || b.Count != 1 {
		t.Errorf("bucket %+v", b)
	}
	if want := time.Unix(1700000000, 500*int64(time.Millisecond)); !p.T.Equal(want) {
		t.Errorf("time %v, want %v", p.T, want)
	}
	if r.Series[0].Labels["a"] != "b" {
		t.Errorf("labels %v", r.Series[0].Labels)
	}
}

func TestDecodeMatrixAndScalar(t *testing.T) {
	r, err := decodeResult([]byte(`{"resultType":"matrix","result":[{"metric":{},"values":[[10,"1"],[20,"NaN"],[30,"+Inf"]]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Series) != 1 || len(r.Series[0].Points) != 3 || r.Series[0].Points[0].V != 1 {
		t.Fatalf("matrix %+v", r)
	}
	r, err = decodeResult([]byte(`{"resultType":"scalar","result":[10,"2.5"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Empty() || r.Series[0].Points[0].V != 2.5 {
		t.Fatalf("scalar %+v", r)
	}
	if _, err := decodeResult([]byte(`{"resultType":"vector","result":[{"metric":{},"value":[1,"x"]}]}`)); err == nil {
		t.Error("a malformed value was accepted")
	}
}

// TestServer writes one float sample through remote write and reads it
// back through the query API.
func TestServer(t *testing.T) {
	s := Start(t)
	api, err := remote.NewAPI(s.WriteURL(), remote.WithAPIPath(""))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Millisecond)
	req := &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{{
		Labels:  []prompb.Label{{Name: "__name__", Value: "promtest_probe"}, {Name: "job", Value: "t"}},
		Samples: []prompb.Sample{{Value: 42.5, Timestamp: now.UnixMilli()}},
	}}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := api.Write(ctx, remote.WriteV1MessageType, req); err != nil {
		t.Fatalf("remote write: %v\n%s", err, s.Log())
	}
	r, err := s.Query(ctx, `promtest_probe{job="t"}`, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Series) != 1 || r.Series[0].Points[0].V != 42.5 {
		t.Fatalf("query result %+v", r)
	}
	series, err := s.Series(ctx, `{__name__="promtest_probe"}`, now.Add(-time.Minute), now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(series) != 1 || series[0]["job"] != "t" {
		t.Errorf("series %v", series)
	}
	for _, match := range []string{"", `promtest_probe{job="t"}`} {
		values, err := s.LabelValues(ctx, "job", match, now.Add(-time.Minute), now.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if len(values) != 1 || values[0] != "t" {
			t.Errorf("values of job over %q: %v", match, values)
		}
	}
	if values, err := s.LabelValues(ctx, "job", `{__name__="none"}`, now.Add(-time.Minute), now.Add(time.Minute)); err != nil || len(values) != 0 {
		t.Errorf("values of job over no series: %v, %v", values, err)
	}
	if _, err := s.Query(ctx, `sum(`, now); err == nil {
		t.Error("a bad query returned no error")
	}
}
