package executor

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/metronome-load/metronome/duration"
	"github.com/metronome-load/metronome/metrics"
)

// DefaultGracefulStop is k6's default gracefulStop.
const DefaultGracefulStop = 30 * time.Second

var scenarioNameRE = regexp.MustCompile(`^[0-9a-zA-Z_-]+$`)

// BaseOptions are the JSON fields every executor accepts. Executor configs
// embed it so that strict decoding accepts the common options.
type BaseOptions struct {
	Executor     string             `json:"executor"`
	StartTime    *duration.Duration `json:"startTime"`
	GracefulStop *duration.Duration `json:"gracefulStop"`
	Exec         *string            `json:"exec"`
	Env          map[string]string  `json:"env"`
	Tags         map[string]string  `json:"tags"`
	Options      json.RawMessage    `json:"options"`
}

// Scenario validates the common options and returns them with defaults
// applied. Errors name the option path.
func (b *BaseOptions) Scenario(name string) (*Scenario, error) {
	if !scenarioNameRE.MatchString(name) {
		return nil, fmt.Errorf("scenarios.%s: a scenario name may only contain letters, digits, '_' and '-'", name)
	}
	s := &Scenario{Name: name, Executor: b.Executor, GracefulStop: DefaultGracefulStop, Exec: "default", Env: b.Env, Tags: b.Tags}
	if b.StartTime != nil {
		if *b.StartTime < 0 {
			return nil, fmt.Errorf("scenarios.%s.startTime: must not be negative", name)
		}
		s.StartTime = b.StartTime.Std()
	}
	if b.GracefulStop != nil {
		if *b.GracefulStop < 0 {
			return nil, fmt.Errorf("scenarios.%s.gracefulStop: must not be negative", name)
		}
		s.GracefulStop = b.GracefulStop.Std()
	}
	if b.Exec != nil {
		if strings.TrimSpace(*b.Exec) == "" {
			return nil, fmt.Errorf("scenarios.%s.exec: must name an exported function", name)
		}
		s.Exec = *b.Exec
	}
	return s, nil
}

// DecodeStrict decodes one scenario's JSON object into v, a pointer,
// rejecting unknown options, wrongly typed values and trailing data. Every
// error names the option path, however deep the failure and whichever part
// of the decoder found it (a type mismatch, an unknown key, or a field's own
// UnmarshalJSON such as a bad duration):
//
//	scenarios.api.timeUnit: invalid duration "1x"
//	scenarios.api.env.REGION: expected a string, got a JSON number
//	scenarios.api.rate: expected an integer, got a JSON number 1.5
//
// scenario is the path of the object below "scenarios.": a scenario's name,
// or "api.stages[1]" for an object nested in a scenario.
func DecodeStrict(scenario string, raw json.RawMessage, v any) error {
	err := decodeStrict(raw, v)
	if err == nil {
		return nil
	}
	if t := reflect.TypeOf(v); t != nil && t.Kind() == reflect.Pointer {
		if p, cause := locate(raw, t.Elem()); cause != nil {
			return &decodeError{path: scenario + p, err: cause}
		}
	}
	return &decodeError{path: scenario, err: err}
}

// DecodeScenario is the start of every executor's Parse: it decodes raw
// strictly into o, an options struct that embeds BaseOptions, and returns
// the validated common options.
func DecodeScenario(name string, raw json.RawMessage, o interface {
	Scenario(name string) (*Scenario, error)
}) (*Scenario, error) {
	if err := DecodeStrict(name, raw, o); err != nil {
		return nil, err
	}
	return o.Scenario(name)
}

// decodeStrict decodes raw into v, rejecting unknown fields and anything
// after the first JSON value.
func decodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errTrailingData
	}
	return nil
}

var errTrailingData = errors.New("unexpected data after the options object")

// decodeError is a decoding failure at an option path below "scenarios.".
// It wraps the decoder's error, so errors.As still finds a field's own.
type decodeError struct {
	path string
	err  error
}

func (e *decodeError) Error() string {
	return "scenarios." + e.path + ": " + describeDecodeError(e.err)
}

func (e *decodeError) Unwrap() error { return e.err }

// describeDecodeError words a decoder error for a user who wrote JSON,
// not Go: type names become JSON kinds and the "json: " prefix goes.
func describeDecodeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("expected %s, got a JSON %s", jsonKind(te.Type), te.Value)
	}
	if _, ok := unknownField(err); ok {
		return "unknown option"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// unknownField returns the key that DisallowUnknownFields rejected.
// encoding/json has no error type for it, only this message.
func unknownField(err error) (string, bool) {
	f, ok := strings.CutPrefix(err.Error(), "json: unknown field ")
	if !ok {
		return "", false
	}
	k, uerr := strconv.Unquote(f)
	return k, uerr == nil
}

// jsonKind names what a JSON value must be to decode into t.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "an array"
	case reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// locate finds where raw fails to decode strictly into a value of type t.
// It returns the failing path relative to raw (".timeUnit",
// ".stages[2].target", or "" for raw itself) and the decoder's error there,
// or a nil error when raw decodes. Members are tried one at a time in
// document order, each against a fresh value, so the first failing one is
// reported; encoding/json alone decides whether a member fails, and the
// Go types only guide the descent into nested objects and arrays.
func locate(raw []byte, t reflect.Type) (string, error) {
	err := decodeStrict(raw, reflect.New(t).Interface())
	if err == nil {
		return "", nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	pt := reflect.PointerTo(t)
	if pt.Implements(jsonUnmarshaler) || pt.Implements(textUnmarshaler) {
		return "", err
	}
	path, cause := "", error(nil)
	switch t.Kind() {
	case reflect.Struct:
		eachMember(raw, func(key string, val json.RawMessage) bool {
			name, merr := json.Marshal(key)
			if merr != nil {
				return false
			}
			one := slices.Concat([]byte("{"), name, []byte(":"), val, []byte("}"))
			kerr := decodeStrict(one, reflect.New(t).Interface())
			if kerr == nil {
				return false
			}
			path, cause = "."+key, kerr
			if k, ok := unknownField(kerr); ok && k == key {
				return true
			}
			if ft, ok := fieldType(t, key); ok {
				if p, ferr := locate(val, ft); ferr != nil {
					path, cause = "."+key+p, ferr
				}
			}
			return true
		})
	case reflect.Map:
		eachMember(raw, func(key string, val json.RawMessage) bool {
			p, ferr := locate(val, t.Elem())
			if ferr != nil {
				path, cause = "."+key+p, ferr
			}
			return ferr != nil
		})
	case reflect.Slice, reflect.Array:
		eachElement(raw, func(i int, val json.RawMessage) bool {
			p, ferr := locate(val, t.Elem())
			if ferr != nil {
				path, cause = fmt.Sprintf("[%d]%s", i, p), ferr
			}
			return ferr != nil
		})
	}
	if cause == nil {
		return "", err
	}
	return path, cause
}

// eachMember calls f with the members of the JSON object raw in document
// order until f returns true. It does nothing if raw is not an object.
func eachMember(raw []byte, f func(key string, val json.RawMessage) bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return
	}
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			return
		}
		var val json.RawMessage
		if dec.Decode(&val) != nil || f(key, val) {
			return
		}
	}
}

// eachElement calls f with the elements of the JSON array raw in order
// until f returns true. It does nothing if raw is not an array.
func eachElement(raw []byte, f func(i int, val json.RawMessage) bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return
	}
	for i := 0; dec.More(); i++ {
		var val json.RawMessage
		if dec.Decode(&val) != nil || f(i, val) {
			return
		}
	}
}

// fieldType returns the type of the struct field that encoding/json
// decodes the object key into: fields of embedded structs are promoted, an
// exact name beats a case-insensitive one, a shallower field a deeper one.
// Fields with the ",string" option are reported as not found, since their
// JSON is a string whatever their type.
func fieldType(t reflect.Type, key string) (reflect.Type, bool) {
	var fold reflect.Type
	foldString := false
	for level := []reflect.Type{t}; len(level) > 0; {
		var next []reflect.Type
		for _, st := range level {
			for i := range st.NumField() {
				f := st.Field(i)
				tag := f.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if f.Anonymous && name == "" {
					et := f.Type
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if et.Kind() == reflect.Struct {
						next = append(next, et)
						continue
					}
				}
				if !f.IsExported() {
					continue
				}
				if name == "" {
					name = f.Name
				}
				asString := slices.Contains(strings.Split(opts, ","), "string")
				if name == key {
					return f.Type, !asString
				}
				if fold == nil && strings.EqualFold(name, key) {
					fold, foldString = f.Type, asString
				}
			}
		}
		level = next
	}
	return fold, fold != nil && !foldString
}

// Account emits the samples of one finished iteration into the VU's
// recorder, as docs/DESIGN.md §2.2 defines them:
//   - a completed or failed iteration: iterations 1 and iteration_duration
//     (end − start), as k6;
//   - an open-model iteration (it.Intended set): schedule_lag
//     (start − intended) and corrected_latency (end − intended); an
//     interrupted one only corrected_latency tagged outcome=interrupted,
//     charged up to its end;
//   - a closed-model iteration with expectedInterval > 0: corrected_latency
//     back-filled the way HdrHistogram's recordValueWithExpectedInterval
//     does (d, d−I, d−2I, … while ≥ I).
//
// It returns whether the iteration counts as completed.
func (d *Deps) Account(vu VU, it Iteration, res Result, expectedInterval time.Duration) bool {
	rec := vu.Recorder()
	m := d.Metrics
	tags := res.Tags
	if tags == nil {
		tags = d.IterationTags
	}
	if res.Outcome == Interrupted {
		if !it.Intended.IsZero() {
			rec.Record(metrics.Sample{Metric: m.CorrectedLatency, Tags: tags.With("outcome", "interrupted"),
				Time: res.End, Value: metrics.Milliseconds(res.End.Sub(it.Intended))})
		}
		if d.State != nil {
			d.State.IterationsInterrupted.Add(1)
		}
		return false
	}
	dur := res.End.Sub(res.Start)
	rec.Record(metrics.Sample{Metric: m.IterationDuration, Tags: tags, Time: res.End, Value: metrics.Milliseconds(dur)})
	rec.Record(metrics.Sample{Metric: m.Iterations, Tags: tags, Time: res.End, Value: 1})
	if !it.Intended.IsZero() {
		lag := max(res.Start.Sub(it.Intended), 0)
		rec.Record(metrics.Sample{Metric: m.ScheduleLag, Tags: tags, Time: res.End, Value: metrics.Milliseconds(lag)})
		rec.Record(metrics.Sample{Metric: m.CorrectedLatency, Tags: tags, Time: res.End, Value: metrics.Milliseconds(res.End.Sub(it.Intended))})
	} else if expectedInterval > 0 {
		BackFill(rec, m.CorrectedLatency, tags, res.End, dur, expectedInterval)
	}
	if d.State != nil {
		d.State.IterationsCompleted.Add(1)
	}
	return true
}

// BackFill records d into metric, and when d exceeds the expected interval
// also d−I, d−2I, … down to values ≥ I: the samples a closed loop would have
// taken had it kept sending every I (HdrHistogram's
// recordValueWithExpectedInterval). The added samples are tagged
// backfilled=true so the summary can say they were not measured.
func BackFill(rec metrics.Recorder, metric *metrics.Metric, tags *metrics.TagSet, at time.Time, d, interval time.Duration) {
	rec.Record(metrics.Sample{Metric: metric, Tags: tags, Time: at, Value: metrics.Milliseconds(d)})
	if interval <= 0 || d < 2*interval {
		// Nothing to add: skip the tag-set lookup, which most closed
		// iterations (shorter than twice their interval) would pay for
		// nothing.
		return
	}
	filled := tags.With("backfilled", "true")
	for v := d - interval; v >= interval; v -= interval {
		rec.Record(metrics.Sample{Metric: metric, Tags: filled, Time: at, Value: metrics.Milliseconds(v)})
	}
}

// Drop accounts for an intended iteration that never started: one
// dropped_iterations sample with the executor-level tags (as k6), and a
// corrected_latency sample of giveUp − intended tagged outcome=dropped.
func (d *Deps) Drop(intended, giveUp time.Time) {
	d.Recorder.Record(metrics.Sample{Metric: d.Metrics.DroppedIterations, Tags: d.Tags, Time: giveUp, Value: 1})
	d.Recorder.Record(metrics.Sample{Metric: d.Metrics.CorrectedLatency, Tags: d.IterationTags.With("outcome", "dropped"),
		Time: giveUp, Value: metrics.Milliseconds(max(giveUp.Sub(intended), 0))})
}
