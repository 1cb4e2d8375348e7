package audit

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"os"
	"time"

	"github.com/metronome-load/metronome/metrics"
)

// spoolMemory is how many bytes a spool keeps in memory before it moves to
// a temporary file: an output of up to about 300,000 requests is audited
// without touching the disk.
var spoolMemory = 4 << 20

// spool holds records written once, in order, and read back once: the
// requests of the output until every iteration is read (their charge
// depends on iterations that end after them, and on an open scenario's
// schedule, which only the whole output places), and the samples that
// wait for the metrics engine. It keeps spoolMemory bytes in memory, then
// moves to a temporary file that is unlinked as soon as it is made, so
// that nothing is left behind however the process ends.
type spool struct {
	mem  bytes.Buffer
	f    *os.File
	w    *bufio.Writer
	r    *bufio.Reader
	n    int64 // records written
	err  error
	scr  []byte
	last int64 // the previous record's time, which a record holds as a delta
	// slots are the recent tag sets (see putTags).
	slots [tagSlots]*metrics.TagSet
}

// put starts a record, which the append functions extend and end writes.
func (s *spool) put() { s.scr = s.scr[:0] }

func (s *spool) uvarint(v uint64) { s.scr = binary.AppendUvarint(s.scr, v) }
func (s *spool) varint(v int64)   { s.scr = binary.AppendVarint(s.scr, v) }
func (s *spool) float(v float64) {
	s.scr = binary.LittleEndian.AppendUint64(s.scr, math.Float64bits(v))
}

// time adds a time in Unix nanoseconds, as the delta from the previous
// record's: a few bytes for outputs in time order.
func (s *spool) time(at int64) {
	s.varint(at - s.last)
	s.last = at
}

// end writes the record.
func (s *spool) end() {
	if s.err != nil {
		return
	}
	s.n++
	if s.f == nil && s.mem.Len()+len(s.scr) <= spoolMemory {
		s.mem.Write(s.scr)
		return
	}
	if s.f == nil {
		if s.err = s.toFile(); s.err != nil {
			return
		}
	}
	_, s.err = s.w.Write(s.scr)
}

// toFile moves the spool to an unlinked temporary file.
func (s *spool) toFile() error {
	f, err := os.CreateTemp("", "metronome-audit-*")
	if err != nil {
		return fmt.Errorf("a temporary file for the requests waiting for their iterations: %w", err)
	}
	// Unlinked at once (where the system allows it: Linux and macOS),
	// it is the process's until it closes, and gone however it ends;
	// elsewhere close removes it.
	_ = os.Remove(f.Name())
	s.f = f
	s.w = bufio.NewWriterSize(f, 256<<10)
	if _, err := s.w.Write(s.mem.Bytes()); err != nil {
		return fmt.Errorf("the temporary file of the requests: %w", err)
	}
	s.mem = bytes.Buffer{}
	return nil
}

// rewind ends the writing and starts the reading, from the first record.
func (s *spool) rewind() error {
	if s.err != nil {
		return s.err
	}
	s.last = 0
	s.slots = [tagSlots]*metrics.TagSet{}
	if s.f == nil {
		s.r = bufio.NewReader(&s.mem)
		return nil
	}
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("the temporary file of the requests: %w", err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("the temporary file of the requests: %w", err)
	}
	s.r = bufio.NewReaderSize(s.f, 256<<10)
	return nil
}

// close gives the spool's file back.
func (s *spool) close() {
	if s.f != nil {
		name := s.f.Name()
		_ = s.f.Close()
		_ = os.Remove(name) // where the unlink at creation failed
		s.f = nil
	}
	s.mem = bytes.Buffer{}
	s.slots = [tagSlots]*metrics.TagSet{}
}

// Reading back: each function reads one field; a read error (which only a
// damaged temporary file can cause) is kept in s.err and reads zeros.

func (s *spool) readUvarint() uint64 {
	if s.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(s.r)
	if err != nil {
		s.err = fmt.Errorf("reading back the requests: %w", err)
	}
	return v
}

func (s *spool) readVarint() int64 {
	if s.err != nil {
		return 0
	}
	v, err := binary.ReadVarint(s.r)
	if err != nil {
		s.err = fmt.Errorf("reading back the requests: %w", err)
	}
	return v
}

func (s *spool) readFloat() float64 {
	var b [8]byte
	if s.err != nil {
		return 0
	}
	if _, err := io.ReadFull(s.r, b[:]); err != nil {
		s.err = fmt.Errorf("reading back the samples: %w", err)
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b[:]))
}

func (s *spool) readTime() int64 {
	s.last += s.readVarint()
	return s.last
}

// tagSlots is the size of a spool's table of recent tag sets.
const tagSlots = 256

// putTags adds a tag set. A record names a set by its slot in a small
// table of recent sets, which the writer and the reader keep alike, and
// holds the set's pairs when the slot held another set: so the spool keeps
// no tag set for good (an output with a URL per request has as many sets
// as requests), and the few sets an output repeats cost a byte each.
func (s *spool) putTags(t *metrics.TagSet) {
	slot := maphash.Comparable(tagSeed, t) % tagSlots
	if s.slots[slot] == t {
		s.uvarint(slot << 1)
		return
	}
	s.slots[slot] = t
	s.uvarint(slot<<1 | 1)
	s.uvarint(uint64(t.Len()))
	t.Range(func(k, v string) bool {
		s.uvarint(uint64(len(k)))
		s.scr = append(s.scr, k...)
		s.uvarint(uint64(len(v)))
		s.scr = append(s.scr, v...)
		return true
	})
}

// tagSeed hashes tag sets to their slots; the writer alone uses it.
var tagSeed = maphash.MakeSeed()

// readTags reads back a tag set.
func (s *spool) readTags() *metrics.TagSet {
	h := s.readUvarint()
	slot := (h >> 1) % tagSlots
	if h&1 == 0 {
		if t := s.slots[slot]; t != nil {
			return t
		}
		return metrics.EmptyTags
	}
	n := s.readUvarint()
	m := make(map[string]string, min(n, 64))
	for i := uint64(0); i < n && s.err == nil; i++ {
		k := s.readString()
		m[k] = s.readString()
	}
	t := metrics.NewTags(m)
	s.slots[slot] = t
	return t
}

// readString reads a length and that many bytes.
func (s *spool) readString() string {
	n := s.readUvarint()
	if s.err != nil {
		return ""
	}
	if n > maxLine {
		s.err = fmt.Errorf("reading back the requests: a tag of %d bytes", n)
		return ""
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(s.r, b); err != nil {
		s.err = fmt.Errorf("reading back the requests: %w", err)
	}
	return string(b)
}

// putRequest spools q, a request of scenario sc (an index into the run's
// scenarios, -1 for the samples read before any scenario tag).
func (a *auditRun) putRequest(sc int, q request) {
	s := &a.requests
	s.put()
	s.uvarint(uint64(sc + 1))
	s.time(q.end)
	s.varint(int64(q.own))
	s.putTags(q.tags)
	s.uvarint(uint64(q.vu + 1))
	s.uvarint(uint64(q.iter + 1))
	var flags uint64
	if q.http {
		flags |= 1
	}
	if q.blocked {
		flags |= 2
	}
	s.uvarint(flags)
	s.end()
}

// nextRequest reads back the next spooled request and its scenario index.
func (a *auditRun) nextRequest() (int, request) {
	s := &a.requests
	sc := int(s.readUvarint()) - 1
	q := request{end: s.readTime(), own: time.Duration(s.readVarint()), tags: s.readTags(),
		vu: int64(s.readUvarint()) - 1, iter: int64(s.readUvarint()) - 1}
	flags := s.readUvarint()
	q.http, q.blocked = flags&1 != 0, flags&2 != 0
	return sc, q
}

// putSample spools a sample that waits for the metrics engine.
func (s *spool) putSample(smp metrics.Sample) {
	s.put()
	s.uvarint(uint64(smp.Metric.ID))
	s.putTags(smp.Tags)
	s.time(smp.Time.UnixNano())
	s.float(smp.Value)
	s.end()
}

// nextSample reads back a spooled sample; byID holds the registry's
// metrics by their ID.
func (s *spool) nextSample(byID map[int]*metrics.Metric) metrics.Sample {
	m := byID[int(s.readUvarint())]
	t := s.readTags()
	at := s.readTime()
	return metrics.Sample{Metric: m, Tags: t, Time: time.Unix(0, at), Value: s.readFloat()}
}
