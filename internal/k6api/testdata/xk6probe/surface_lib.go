package probe

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http/cookiejar"
	"time"

	"github.com/sirupsen/logrus"

	k6http "go.k6.io/k6/v2/js/modules/k6/http"
	"go.k6.io/k6/v2/lib"
	"go.k6.io/k6/v2/lib/netext"
	"go.k6.io/k6/v2/lib/types"
	"go.k6.io/k6/v2/metrics"
)

// surfaceLib uses the names of go.k6.io/k6/v2/lib, lib/types, lib/netext
// and js/modules/k6/http that published extensions use, and says what
// each gave.
func surfaceLib(p *probe) []string {
	var out []string
	add := func(f string, a ...any) { out = append(out, fmt.Sprintf(f, a...)) }

	var st *lib.State = p.vu.State()
	var samples chan<- metrics.SampleContainer = st.Samples
	var tags *lib.VUStateTags = st.Tags
	tags.Modify(func(tm *metrics.TagsAndMeta) { tm.SetTag("surface", "on") })
	cur := tags.GetCurrentValues()
	on, _ := cur.Tags.Get("surface")
	tags.Modify(func(tm *metrics.TagsAndMeta) { tm.DeleteTag("surface") })
	var tlsConf *tls.Config = st.TLSConfig
	var dialer lib.DialContexter = st.Dialer
	var dial func(context.Context, string, string) (net.Conn, error) = dialer.DialContext
	var resolver lib.AddrResolver = st.GetAddrResolver()
	var logger logrus.FieldLogger = st.Logger
	var jar *cookiejar.Jar = st.CookieJar
	var vuID uint64 = st.VUID
	var iter int64 = st.Iteration
	add("state samples=%v tag=%s tls=%v dial=%v resolver=%v logger=%v jar=%v vu=%d iter=%d",
		samples != nil, on, tlsConf != nil, dial != nil, resolver == nil, logger != nil, jar != nil, vuID, iter)

	var o lib.Options = st.Options
	add("options maxRedirects=%d throw=%v noConnectionReuse=%v noVUConnectionReuse=%v userAgent=%v systemTags.vu=%v",
		o.MaxRedirects.Int64, o.Throw.Bool, o.NoConnectionReuse.Bool, o.NoVUConnectionReuse.Bool, o.UserAgent.Valid,
		o.SystemTags.Has(metrics.TagVU))

	// Beyond the surface: xk6-tcp's buffers come back empty; the VU
	// lends one pool of the run.
	pool := lib.NewBufferPool()
	buf := pool.Get()
	buf.WriteString("used")
	pool.Put(buf)
	add("bufferpool empty=%v state=%v", pool.Get().Len() == 0, st.BufferPool != nil)

	// lib/types.
	var d types.Duration = types.Duration(90 * time.Second)
	var nd types.NullDuration = types.NewNullDuration(2*time.Second, true)
	from := types.NullDurationFrom(3 * time.Second)
	var parsed types.NullDuration
	err := parsed.UnmarshalText([]byte("1m30s"))
	var bad types.NullDuration
	badErr := bad.UnmarshalText([]byte("soon"))
	add("types %s %v %s %v %s %v %v", d.String(), nd.Valid, nd.Duration, from.TimeDuration(), parsed.Duration, err == nil, badErr != nil)

	// lib/netext and k6/http.
	add("tls %s %s %s %s", netext.TLS_1_0, netext.TLS_1_1, netext.TLS_1_2, netext.TLS_1_3)
	cj := k6http.CookieJar{Jar: jar}
	add("cookiejar %v", cj.Jar == jar)
	return out
}
