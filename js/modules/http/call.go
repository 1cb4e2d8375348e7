package http

import (
	"github.com/metronome-load/metronome/internal/httpclient"
	"github.com/metronome-load/metronome/metrics"
)

// call is one request of a script: the engine's request (which holds its
// result) and what the module needs to turn the result into samples. The
// response object the script gets copies what it shows out of the call,
// so that a synchronous request's call can carry the VU's next one (see
// instance.syncCall); batch and asyncRequest make a call per request.
type call struct {
	req httpclient.Request

	// target is the cached URL req.URL points into; its memos spare a
	// repeated request the tag work.
	target *target
	// tags are State.Tags, the per-request tags and the method, url and
	// name system tags.
	tags   *metrics.TagSet
	expect *expected // nil: no response callback
	// compress is params.compression, nil for none; plain is the body
	// before it, which the response's request shows.
	compress []httpclient.Compression
	plain    string
	// named is set when the script chose the name tag.
	named bool
	throw bool
}

// target is a parsed request URL, cached per VU by its source string,
// with the tag sets built last time for a request to it, so that
// repeating a request repeats no tag work. Only the VU goroutine touches
// the memos.
type target struct {
	httpclient.Target
	reqTags tagMemo
	hopTags hopMemo
}

// tagMemo remembers the tags of a request: base (State and per-request
// tags) plus method, name and url.
type tagMemo struct {
	base   *metrics.TagSet
	method string
	name   string // the name the script chose, or ""
	url    string // the url and name tags' URL when unnamed
	sys    sysTags
	tags   *metrics.TagSet
}

// hopMemo remembers the tags of a hop without a transport error.
type hopMemo struct {
	base     *metrics.TagSet
	status   int
	proto    string
	tls      uint16
	expected int8
	sys      sysTags
	tags     *metrics.TagSet
}
