package result

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/metronome-load/metronome/executor/segment"
)

// Union checks that files are the instances of one test that together ran
// it whole: the same script and options (the tags and the execution
// segment aside), and segments that neither overlap nor leave a gap from
// 0 to 1. It returns the files ordered by segment, or an error of one
// sentence that names the files at fault.
func Union(files []*File) ([]*File, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("no result files to merge")
	}
	for _, f := range files[1:] {
		if f.Header.Test != files[0].Header.Test {
			return nil, fmt.Errorf("%s and %s come from different tests (%s); merge only the result files of one test",
				files[0].Name, f.Name, difference(files[0], f))
		}
	}
	type part struct {
		f   *File
		seg segment.Segment
	}
	parts := make([]part, len(files))
	for i, f := range files {
		seg, err := segment.Parse(f.Header.Segment)
		if err != nil {
			return nil, fmt.Errorf("%s: its executionSegment cannot be read: %v", f.Name, err)
		}
		parts[i] = part{f, seg}
	}
	slices.SortStableFunc(parts, func(a, b part) int { return a.seg.From.Cmp(b.seg.From) })
	var gaps []string
	at := new(big.Rat)
	for i, p := range parts {
		if i > 0 && p.seg.From.Cmp(parts[i-1].seg.To) < 0 {
			prev := parts[i-1]
			return nil, fmt.Errorf("%s (segment %s) and %s (segment %s) overlap: each part of the test must come from one file, so one was given twice or comes from another run",
				prev.f.Name, prev.seg, p.f.Name, p.seg)
		}
		if p.seg.From.Cmp(at) > 0 {
			gaps = append(gaps, segment.Segment{From: at, To: p.seg.From}.String())
		}
		at = p.seg.To
	}
	if one := big.NewRat(1, 1); at.Cmp(one) < 0 {
		gaps = append(gaps, segment.Segment{From: at, To: one}.String())
	}
	if len(gaps) > 0 {
		return nil, gapError(fmt.Sprintf("the files leave the segment%s %s of the test out: the result file of the runner that ran %s is missing",
			plural(len(gaps)), strings.Join(gaps, ", "), map[bool]string{true: "it", false: "them"}[len(gaps) == 1]))
	}
	out := make([]*File, len(parts))
	for i, p := range parts {
		out[i] = p.f
	}
	return out, nil
}

// ErrGap is what Union's error is when the files are one test's but leave
// a segment out: more files may yet come.
var ErrGap = errors.New("the files leave a segment of the test out")

// gapError is Union's error for a segment left out.
type gapError string

func (e gapError) Error() string        { return string(e) }
func (e gapError) Is(target error) bool { return target == ErrGap }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// difference says how the tests of two files differ.
func difference(a, b *File) string {
	if a.Header.ScriptDigest != b.Header.ScriptDigest {
		return fmt.Sprintf("their scripts differ: %s and %s", a.Header.Script, b.Header.Script)
	}
	oa, ob := comparableOptions(a.Header.Options), comparableOptions(b.Header.Options)
	var keys []string
	for k, v := range oa {
		if w, ok := ob[k]; !ok || !bytes.Equal(v, w) {
			keys = append(keys, k)
		}
	}
	for k := range ob {
		if _, ok := oa[k]; !ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "their options differ"
	}
	slices.Sort(keys)
	return "their options differ in " + strings.Join(keys, ", ")
}
