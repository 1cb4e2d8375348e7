// Package csv implements the "k6/experimental/csv" module: parse(file,
// options) reads a whole k6/experimental/fs File into a read-only array
// shared by every VU, and Parser reads one record per next() call.
// Records are arrays of strings, or objects keyed by the header line with
// asObjects. Parsing is Go's encoding/csv (RFC 4180 quoting).
package csv

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/internal/js/modules/fs"
	"github.com/metronome-load/metronome/js/modules"
	"github.com/metronome-load/metronome/js/modules/jsmod"
)

func init() {
	modules.Register("k6/experimental/csv", modules.ModuleFunc(New))
}

// New instantiates the module for one VU.
func New(vu modules.VU) (modules.Exports, error) {
	m := &module{vu: vu}
	return modules.Exports{Named: map[string]any{
		"parse":  m.parse,
		"Parser": m.newParser,
	}}, nil
}

type module struct {
	vu     modules.VU
	freeze sobek.Callable
}

// options are parse's and Parser's options.
type options struct {
	delimiter     rune
	skipFirstLine bool
	fromLine      int64 // -1: unset
	toLine        int64 // -1: unset
	asObjects     bool
}

// key names the options in the shared-data key.
func (o options) key() string {
	return fmt.Sprintf("%q|%t|%d|%d|%t", o.delimiter, o.skipFirstLine, o.fromLine, o.toLine, o.asObjects)
}

// args reads (file, options?) and checks them as k6 does.
func (m *module) args(c sobek.FunctionCall) (*fs.File, options) {
	f, ok := fs.FileOf(c.Argument(0))
	if !ok {
		jsmod.ThrowGoError(m.vu.Runtime(), "first argument expected to be a fs.File instance, got %s instead", describe(c.Argument(0)))
	}
	o := options{delimiter: ',', fromLine: -1, toLine: -1}
	if obj, ok := c.Argument(1).(*sobek.Object); ok {
		if v := obj.Get("delimiter"); v != nil && !sobek.IsUndefined(v) {
			d := []rune(v.String())
			if len(d) != 1 {
				jsmod.ThrowGoError(m.vu.Runtime(), "failed to interpret the provided Parser options; reason: delimiter must be a single character")
			}
			o.delimiter = d[0]
		}
		if v := obj.Get("skipFirstLine"); v != nil {
			o.skipFirstLine = v.ToBoolean()
		}
		if v := obj.Get("asObjects"); v != nil {
			o.asObjects = v.ToBoolean()
		}
		for _, p := range []struct {
			name string
			dst  *int64
		}{{"fromLine", &o.fromLine}, {"toLine", &o.toLine}} {
			if v := obj.Get(p.name); v != nil && !sobek.IsUndefined(v) && !sobek.IsNull(v) {
				n := v.ToInteger()
				if n < 0 {
					jsmod.ThrowGoError(m.vu.Runtime(), "failed to interpret the provided Parser options; reason: %s must be a non-negative number", p.name)
				}
				*p.dst = n
			}
		}
	}
	if o.fromLine >= 0 && o.toLine >= 0 && o.fromLine > o.toLine {
		jsmod.ThrowGoError(m.vu.Runtime(), "failed to interpret the provided Parser options; reason: fromLine must be less than or equal to toLine")
	}
	if o.asObjects && o.fromLine > 0 {
		jsmod.ThrowGoError(m.vu.Runtime(), "failed to create a new parser; reason: the 'header' option cannot be enabled when 'fromLine' is set to a value greater than 0")
	}
	return f, o
}

func describe(v sobek.Value) string {
	if sobek.IsUndefined(v) {
		return "undefined"
	}
	return fmt.Sprintf("%T", v)
}

// reader reads records of a file's content with the options' delimiter.
type reader struct {
	r    *csv.Reader
	line int64 // index of the next record
	o    options
}

func newReader(data []byte, o options) *reader {
	r := csv.NewReader(bytes.NewReader(data))
	r.Comma = o.delimiter
	r.FieldsPerRecord = -1
	r.ReuseRecord = false
	return &reader{r: r, o: o}
}

// header reads the first record as the header when asObjects is set.
func (rd *reader) header() ([]string, error) {
	if !rd.o.asObjects {
		return nil, nil
	}
	h, err := rd.r.Read()
	rd.line++
	if err != nil {
		return nil, fmt.Errorf("failed to create a new parser; reason: failed to read the first line; reason: %w", err)
	}
	return h, nil
}

// next returns the next record the options select, io.EOF after the last.
func (rd *reader) next() ([]string, error) {
	for {
		if rd.o.toLine >= 0 && rd.line > rd.o.toLine {
			return nil, io.EOF
		}
		rec, err := rd.r.Read()
		line := rd.line
		rd.line++
		if err != nil {
			return nil, err
		}
		if (line == 0 && rd.o.skipFirstLine) || (rd.o.fromLine >= 0 && line < rd.o.fromLine) {
			continue
		}
		return rec, nil
	}
}

// table is what parse builds once per process: the selected records, and
// the header when they are objects.
type table struct {
	header []string
	rows   [][]string
}

// parse is parse(file, options?): a promise of a read-only array of the
// file's records, built once per process and shared by every VU.
func (m *module) parse(c sobek.FunctionCall) sobek.Value {
	rt := m.vu.Runtime()
	f, o := m.args(c)
	build := func() (any, error) {
		rd := newReader(f.Content.Data, o)
		h, err := rd.header()
		if err != nil {
			return nil, err
		}
		t := &table{header: h}
		for {
			rec, err := rd.next()
			if errors.Is(err, io.EOF) {
				return t, nil
			}
			if err != nil {
				return nil, fmt.Errorf("failed to parse the file %s; reason: %w", f.Path, err)
			}
			t.rows = append(t.rows, rec)
		}
	}
	var val any
	var err error
	if env := m.vu.InitEnv(); env != nil {
		val, err = env.Shared.Get("k6/experimental/csv:"+f.Path+"|"+o.key(), build)
	} else {
		val, err = build()
	}
	if err != nil {
		return jsmod.Settled(rt, nil, jsmod.Errorf(jsmod.GoError, "%v", err))
	}
	t, ok := val.(*table)
	if !ok {
		return jsmod.Settled(rt, nil, jsmod.Errorf(jsmod.GoError, "the name of the parsed data is taken by other shared data"))
	}
	return jsmod.Settled(rt, rt.NewDynamicArray(&view{m: m, t: t}), nil)
}

// record makes the JavaScript value of one record: an array of strings,
// or an object keyed by the header (keys sorted, as k6's parse gives
// them; sorted is false for Parser, which keeps the header's order).
func (m *module) record(header, rec []string, sorted bool) *sobek.Object {
	rt := m.vu.Runtime()
	if header == nil {
		vals := make([]any, len(rec))
		for i, v := range rec {
			vals[i] = v
		}
		return rt.NewArray(vals...)
	}
	o := rt.NewObject()
	idx := make([]int, len(header))
	for i := range idx {
		idx[i] = i
	}
	if sorted {
		slices.SortStableFunc(idx, func(a, b int) int {
			switch {
			case header[a] < header[b]:
				return -1
			case header[a] > header[b]:
				return 1
			}
			return 0
		})
	}
	for _, i := range idx {
		v := ""
		if i < len(rec) {
			v = rec[i]
		}
		_ = o.Set(header[i], v)
	}
	return o
}

// view is one VU's read-only array view of a parsed table. Each element
// is built on access and frozen, so no VU can change what others read.
type view struct {
	m *module
	t *table
}

func (v *view) Len() int { return len(v.t.rows) }

func (v *view) Get(i int) sobek.Value {
	if i < 0 || i >= len(v.t.rows) {
		return sobek.Undefined()
	}
	o := v.m.record(v.t.header, v.t.rows[i], true)
	rt := v.m.vu.Runtime()
	if v.m.freeze == nil {
		v.m.freeze, _ = sobek.AssertFunction(rt.Get("Object").ToObject(rt).Get("freeze"))
	}
	_, _ = v.m.freeze(sobek.Undefined(), o)
	return o
}

// Set throws: the parsed rows are shared by all VUs and read-only.
func (v *view) Set(i int, _ sobek.Value) bool {
	jsmod.ThrowTypeError(v.m.vu.Runtime(), "the parsed CSV array is read-only (index %d)", i)
	return false
}

// SetLen throws, as Set does.
func (v *view) SetLen(int) bool {
	jsmod.ThrowTypeError(v.m.vu.Runtime(), "the parsed CSV array is read-only")
	return false
}

// parser is new Parser(file, options?), made in the init context.
type parser struct {
	m      *module
	rd     *reader
	header []string
	err    error
}

// newParser is the Parser constructor.
func (m *module) newParser(cc sobek.ConstructorCall) *sobek.Object {
	c := sobek.FunctionCall{This: cc.This, Arguments: cc.Arguments}
	rt := m.vu.Runtime()
	if m.vu.InitEnv() == nil {
		jsmod.ThrowGoError(m.vu.Runtime(), "csv Parser constructor must be called in the init context")
	}
	f, o := m.args(c)
	p := &parser{m: m, rd: newReader(f.Content.Data, o)}
	h, err := p.rd.header()
	if err != nil {
		jsmod.Throw(rt, jsmod.Errorf(jsmod.GoError, "%v", err))
	}
	p.header = h
	_ = cc.This.Set("next", p.next)
	return nil
}

// next is parser.next(): a promise of {done, value}; value is the record,
// and an empty array once done.
func (p *parser) next(sobek.FunctionCall) sobek.Value {
	rt := p.m.vu.Runtime()
	res := rt.NewObject()
	rec, err := p.rd.next()
	switch {
	case errors.Is(err, io.EOF):
		_ = res.Set("done", true)
		_ = res.Set("value", rt.NewArray())
	case err != nil:
		return jsmod.Settled(rt, nil, jsmod.Errorf(jsmod.GoError, "failed to parse the next record; reason: %v", err))
	default:
		_ = res.Set("done", false)
		_ = res.Set("value", p.m.record(p.header, rec, false))
	}
	return jsmod.Settled(rt, res, nil)
}
