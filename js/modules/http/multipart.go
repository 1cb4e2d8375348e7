package http

import (
	"bytes"
	"fmt"
	"mime"
	"mime/multipart"
	"net/textproto"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/sobek"

	"github.com/metronome-load/metronome/internal/httpclient"
	"github.com/metronome-load/metronome/js/modules/jsmod"
)

// fileMark marks the objects http.file() makes, invisibly to scripts (a
// symbol key that neither JSON nor Object.keys shows), so that a body
// object holding one is sent as multipart/form-data.
var fileMark = sobek.NewSymbol("k6/http.file")

// jsFile is http.file(data, filename?, contentType?): a file for a
// multipart body, {data, filename, content_type} as in k6. Without a
// filename k6 names the file after the current time in nanoseconds; the
// content type defaults to application/octet-stream.
func (in *instance) jsFile(c sobek.FunctionCall) sobek.Value {
	rt := in.rt
	data := c.Argument(0)
	if sobek.IsUndefined(data) || sobek.IsNull(data) {
		jsmod.ThrowTypeError(rt, "http.file() needs the file's data: a string or an ArrayBuffer")
	}
	name := strconv.FormatInt(time.Now().UnixNano(), 10)
	if v := c.Argument(1); !sobek.IsUndefined(v) && !sobek.IsNull(v) && v.String() != "" {
		name = v.String()
	}
	ctype := "application/octet-stream"
	if v := c.Argument(2); !sobek.IsUndefined(v) && !sobek.IsNull(v) && v.String() != "" {
		ctype = v.String()
	}
	o := rt.NewObject()
	_ = o.Set("data", data)
	_ = o.Set("filename", name)
	_ = o.Set("content_type", ctype)
	_ = o.DefineDataPropertySymbol(fileMark, rt.ToValue(true), sobek.FLAG_FALSE, sobek.FLAG_FALSE, sobek.FLAG_FALSE)
	return o
}

func isFile(v sobek.Value) (*sobek.Object, bool) {
	o, ok := v.(*sobek.Object)
	if !ok {
		return nil, false
	}
	m := o.GetSymbol(fileMark)
	return o, m != nil && m.ToBoolean()
}

// multipartBody makes r's body multipart/form-data when the body object
// holds a file from http.file(), and reports whether it did. Parts follow
// the object's key order; a file part carries its filename and content
// type, other values are sent as text (an array as Go prints it, "[a b]",
// as k6 does). The request's Content-Type is set unless the script set
// one; a boundary the script put there is the one used.
func (in *instance) multipartBody(r *httpclient.Request, o *sobek.Object) bool {
	keys := o.Keys()
	has := false
	for _, k := range keys {
		if _, ok := isFile(o.Get(k)); ok {
			has = true
			break
		}
	}
	if !has {
		return false
	}
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	ct, set := "", false
	if v := r.Header["Content-Type"]; len(v) > 0 {
		ct, set = v[0], true
		if _, params, err := mime.ParseMediaType(ct); err == nil && params["boundary"] != "" {
			if err := w.SetBoundary(params["boundary"]); err != nil {
				jsmod.ThrowTypeError(in.rt, "the Content-Type header's multipart boundary is not valid: %v", err)
			}
		}
	}
	for _, k := range keys {
		v := o.Get(k)
		if sobek.IsUndefined(v) {
			continue
		}
		if f, ok := isFile(v); ok {
			h := textproto.MIMEHeader{}
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"; filename="%s"`, quoteEscaper.Replace(k), quoteEscaper.Replace(f.Get("filename").String())))
			h.Set("Content-Type", f.Get("content_type").String())
			part, _ := w.CreatePart(h)
			_, _ = part.Write(in.fileBytes(f.Get("data")))
			continue
		}
		_ = w.WriteField(k, fieldText(v))
	}
	_ = w.Close()
	r.Body, r.HasBody = buf.String(), true
	if !set {
		r.Header = r.Header.Clone()
		if r.Header == nil {
			r.Header = make(map[string][]string, 1)
		}
		r.Header["Content-Type"] = []string{w.FormDataContentType()}
	}
	return true
}

var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"")

// fileBytes reads a file's data: a string as UTF-8, an ArrayBuffer or a
// typed array's bytes.
func (in *instance) fileBytes(v sobek.Value) []byte {
	o, ok := v.(*sobek.Object)
	if !ok {
		return []byte(v.String())
	}
	switch x := o.Export().(type) {
	case sobek.ArrayBuffer:
		return x.Bytes()
	case []byte:
		return x
	}
	return []byte(v.String())
}

// fieldText is a non-file multipart value as text; arrays print as Go
// prints a slice, which is what k6 sends.
func fieldText(v sobek.Value) string {
	o, ok := v.(*sobek.Object)
	if !ok || o.ClassName() != "Array" {
		return v.String()
	}
	n := o.Get("length").ToInteger()
	parts := make([]string, 0, n)
	for i := range n {
		parts = append(parts, fieldText(o.Get(strconv.FormatInt(i, 10))))
	}
	return "[" + strings.Join(parts, " ") + "]"
}
