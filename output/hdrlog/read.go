package hdrlog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/metronome-load/metronome/internal/hdrhist"
)

// Limits of reading a log, so that what a log costs grows with its bytes:
// a line of a hundred bytes can describe a histogram of any range and
// precision, which decoded densely takes up to gigabytes. Histograms are
// decoded sparsely (hdrhistogram.PackedHistogram), in memory proportional
// to their populated buckets, and a line is refused beyond these sizes.
const (
	// MaxLineBytes is the longest line read. metronome's own lines are
	// at most a few hundred KB.
	MaxLineBytes = 4 << 20
	// MaxPayloadBytes is the most one interval histogram's encoding may
	// inflate to, the rule of every reader of metronome's files
	// (hdrhist.MaxPayloadBytes).
	MaxPayloadBytes = hdrhist.MaxPayloadBytes
)

// maxReported is how many skipped lines of one log are described one by
// one; the others are counted.
const maxReported = 5

// Interval is one interval histogram of a log.
type Interval struct {
	// Tag is the line's tag, "" when it has none.
	Tag        string
	Start, End time.Time
	Hist       *hdrhistogram.PackedHistogram
}

// LogReader reads the interval histograms of an HdrHistogram interval log
// (format 1.3, as -o hdrlog=FILE and HdrHistogram's own tools write it).
// Unlike hdrhistogram.HistogramLogReader, a line it cannot read is not
// passed over in silence: it is skipped, counted and described by
// Warnings, and the others are read.
type LogReader struct {
	r    *bufio.Reader
	name string
	line int

	startSec, baseSec           float64
	observedStart, observedBase bool

	skipped  int
	warnings []string
	// firstSkipped and firstWhy are the first skipped line and why.
	firstSkipped int
	firstWhy     string
}

// NewLogReader reads the log r, named name in warnings.
func NewLogReader(r io.Reader, name string) *LogReader {
	return &LogReader{r: bufio.NewReaderSize(r, 64<<10), name: name}
}

// Next returns the next interval histogram, or io.EOF after the last.
// Other errors are the reader's.
func (lr *LogReader) Next() (*Interval, error) {
	for {
		line, err := lr.readLine()
		if errors.Is(err, errLongLine) {
			lr.skip(fmt.Sprintf("a line longer than %d MiB", MaxLineBytes>>20))
			continue
		}
		if line == "" && err != nil {
			return nil, err
		}
		iv, perr := lr.parse(line)
		if perr != nil {
			lr.skip(perr.Error())
		} else if iv != nil {
			return iv, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Skipped is how many lines were skipped so far.
func (lr *LogReader) Skipped() int { return lr.skipped }

// Warnings describe the lines skipped so far: the first few one by one
// with their line number, the rest as a count.
func (lr *LogReader) Warnings() []string {
	w := lr.warnings
	if more := lr.skipped - len(w); more > 0 {
		w = append(w[:len(w):len(w)], fmt.Sprintf("%s: %d more lines that are not interval histograms were skipped", lr.name, more))
	}
	return w
}

// NoIntervals is the error of a log that held no interval histogram:
// the file is not a log (nor a result file, which the commands reading
// logs tell apart first). It says why when the file is empty or every
// line that was not a comment was skipped, with the first one's reason.
func (lr *LogReader) NoIntervals() error {
	why := ""
	switch {
	case lr.skipped > 0:
		why = fmt.Sprintf("; its %d lines that are not comments were skipped, the first (line %d) as %s", lr.skipped, lr.firstSkipped, lr.firstWhy)
	case lr.line <= 1:
		why = "; it is empty"
	}
	return fmt.Errorf("%s holds no interval histogram: it is neither an HdrHistogram log (-o hdrlog=FILE) nor a result file (-o result=FILE)%s", lr.name, why)
}

func (lr *LogReader) skip(why string) {
	if lr.skipped == 0 {
		lr.firstSkipped, lr.firstWhy = lr.line, why
	}
	lr.skipped++
	if len(lr.warnings) < maxReported {
		lr.warnings = append(lr.warnings, fmt.Sprintf("%s:%d: %s; the line was skipped", lr.name, lr.line, why))
	}
}

var errLongLine = errors.New("line too long")

// readLine returns the next line without its line break. A line longer
// than MaxLineBytes is read through and dropped (errLongLine), so that
// memory stays bounded; the last line may lack its break.
func (lr *LogReader) readLine() (string, error) {
	lr.line++
	var buf []byte
	for {
		frag, err := lr.r.ReadSlice('\n')
		if len(buf)+len(frag) > MaxLineBytes {
			buf = nil
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = lr.r.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return "", err
			}
			return "", errLongLine
		}
		buf = append(buf, frag...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return strings.TrimRight(string(buf), "\r\n"), err
	}
}

// parse reads one line: nil for a comment, the legend or an empty line.
// Times follow hdrhistogram.HistogramLogReader: relative to #[BaseTime]
// when given, else absolute unless the first interval starts more than a
// year before #[StartTime].
func (lr *LogReader) parse(line string) (*Interval, error) {
	switch {
	case line == "" || strings.HasPrefix(line, `"`):
		return nil, nil
	case strings.HasPrefix(line, "#"):
		return nil, lr.comment(line)
	}
	iv := &Interval{}
	rest := line
	if t, ok := strings.CutPrefix(line, "Tag="); ok {
		var found bool
		if iv.Tag, rest, found = strings.Cut(t, ","); !found {
			return nil, errors.New("a Tag= line without an interval")
		}
	}
	f := strings.SplitN(rest, ",", 4)
	if len(f) != 4 {
		return nil, errors.New("not an interval histogram (want [Tag=…,]start,length,max,histogram)")
	}
	start, err1 := strconv.ParseFloat(f[0], 64)
	length, err2 := strconv.ParseFloat(f[1], 64)
	_, err3 := strconv.ParseFloat(f[2], 64)
	switch {
	case err1 != nil || err2 != nil || err3 != nil:
		return nil, fmt.Errorf("start, length and max must be numbers, not %q, %q and %q", f[0], f[1], f[2])
	case start < 0 || length < 0 || math.IsInf(start+length, 0) || math.IsNaN(start+length):
		return nil, fmt.Errorf("start %s and length %s must be finite and not negative", f[0], f[1])
	}
	h, err := decode(f[3])
	if err != nil {
		return nil, fmt.Errorf("the histogram cannot be read: %v", err)
	}
	if !lr.observedStart {
		lr.startSec, lr.observedStart = start, true
	}
	if !lr.observedBase {
		if start < lr.startSec-365*24*3600 {
			lr.baseSec = lr.startSec
		}
		lr.observedBase = true
	}
	abs := start + lr.baseSec
	iv.Start, iv.End = time.UnixMilli(int64(abs*1000)), time.UnixMilli(int64((abs+length)*1000))
	iv.Hist = h
	return iv, nil
}

// comment reads #[StartTime: …] and #[BaseTime: …]; other comments are
// ignored.
func (lr *LogReader) comment(line string) error {
	for _, c := range []struct {
		prefix string
		v      *float64
		seen   *bool
	}{{"#[StartTime: ", &lr.startSec, &lr.observedStart}, {"#[BaseTime: ", &lr.baseSec, &lr.observedBase}} {
		rest, ok := strings.CutPrefix(line, c.prefix)
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(rest, " ")
		v, err := strconv.ParseFloat(strings.TrimRight(num, "]"), 64)
		if err != nil || v < 0 || math.IsInf(v, 0) {
			return fmt.Errorf("%s is not a time in seconds", strings.TrimSuffix(c.prefix, " "))
		}
		*c.v, *c.seen = v, true
	}
	return nil
}

// decode decodes an interval's histogram sparsely, under the cap every
// reader of metronome's files keeps (hdrhist.Decode): any geometry, a
// payload of at most MaxPayloadBytes.
func decode(payload string) (*hdrhistogram.PackedHistogram, error) {
	return hdrhist.Decode([]byte(payload), nil)
}
