package html

import (
	"strconv"
	"strings"
	"testing"

	"github.com/grafana/sobek"
)

// BenchmarkParseFindText is res.html().find("a.item").last().text() on a 12 KB
// page of 200 links: the usual scraping step of a k6 script.
func BenchmarkParseFindText(b *testing.B) {
	var page strings.Builder
	page.WriteString("<html><head><title>t</title></head><body><ul>")
	for i := range 200 {
		page.WriteString(`<li><a class="item" href="/item/` + strconv.Itoa(i) + `">Item number ` + strconv.Itoa(i) + `</a></li>`)
	}
	page.WriteString("</ul></body></html>")
	src := page.String()
	rt := sobek.New()
	rt.SetFieldNameMapper(sobek.TagFieldNameMapper("js", true))
	_ = rt.Set("parseHTML", func(c sobek.FunctionCall) sobek.Value { return Parse(rt, c.Argument(0).String(), "") })
	_ = rt.Set("src", src)
	prog := sobek.MustCompile("bench.js", `parseHTML(src).find("a.item").last().text()`, false)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		v, err := rt.RunProgram(prog)
		if err != nil || v.String() != "Item number 199" {
			b.Fatalf("%v %v", v, err)
		}
	}
}
