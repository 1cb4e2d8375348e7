package httpclient

import (
	"encoding/hex"
	"errors"
	"reflect"
	"testing"
)

// TestCompressSendsK6sBytes holds each compression to the bytes k6 v2.2.0
// sent for the body "hello hello hello" with that params.compression, as
// a loopback server recorded them (docs/k6-compatibility.md, corpus
// 440–443): the same framing (gzip without a name or time, deflate as
// zlib, zstd with a checksum and no content size) and the same encoder
// settings.
func TestCompressSendsK6sBytes(t *testing.T) {
	body := []byte("hello hello hello")
	for _, tc := range []struct {
		in, enc, hex string
	}{
		{"gzip", "gzip", "1f8b08000000000000ffca48cdc9c957402201010000ffff8088f9e511000000"},
		{"deflate", "deflate", "789cca48cdc9c957402201010000ffff3a2e067d"},
		{"br", "br", "1b10000024406a1064eaf09c1e"},
		{"zstd", "zstd", "28b52ffd040089000068656c6c6f2068656c6c6f2068656c6c6fa2ed1e0c"},
		{"gzip, deflate", "gzip, deflate", "789c92efe6600083ffa73cce9e3c19eea0c4c8c8c0f0ff7f43c7cfa7820c0c0c80000000ffffa21b"},
		{" deflate ,gzip ", "deflate, gzip", "1f8b08000000000000ffaa9873cae3ecc993e10e4a8c8c0c0cffff5be9b1d502020000ffff49c4e0"},
	} {
		cs, err := ParseCompressions(tc.in)
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		// Twice: the second run takes the pooled writers the first left.
		for range 2 {
			got, enc, err := Compress(cs, body)
			if err != nil {
				t.Fatalf("%q: %v", tc.in, err)
			}
			if enc != tc.enc {
				t.Errorf("%q: Content-Encoding %q, k6 sends %q", tc.in, enc, tc.enc)
			}
			// k6's server log kept the first 40 bytes.
			h := hex.EncodeToString(got)
			if len(h) > 80 {
				h = h[:80]
			}
			if h != tc.hex {
				t.Errorf("%q: sent %s, k6 sends %s", tc.in, h, tc.hex)
			}
		}
	}
	// An empty body is compressed too: gzip's empty stream, 23 bytes.
	cs, _ := ParseCompressions("gzip")
	got, _, err := Compress(cs, nil)
	if err != nil || hex.EncodeToString(got) != "1f8b08000000000000ff010000ffff0000000000000000" {
		t.Errorf("empty body: %x, %v", got, err)
	}
}

// TestParseCompressionsAsK6 checks the names k6 accepts and the error of
// those it refuses, with its text.
func TestParseCompressionsAsK6(t *testing.T) {
	for in, want := range map[string][]Compression{
		"":                 nil,
		"   ":              nil,
		"gzip":             {Gzip},
		"br,zstd":          {Br, Zstd},
		"gzip, br":         {Gzip, Br},
		"deflate,deflate ": {Deflate, Deflate},
	} {
		got, err := ParseCompressions(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for in, name := range map[string]string{"GZIP": "GZIP", "lzw": "lzw", "gzip,": "", "undefined": "undefined", "gzip;br": "gzip;br"} {
		_, err := ParseCompressions(in)
		var ce *CompressionError
		if !errors.As(err, &ce) || ce.Name != name {
			t.Errorf("%q: %v, want the refusal of %q", in, err, name)
			continue
		}
		if want := "unknown compression algorithm " + name + ", supported algorithms are [gzip deflate zstd br]"; err.Error() != want {
			t.Errorf("%q: %q, k6 says %q", in, err, want)
		}
	}
	if _, _, err := Compress([]Compression{Br + 1}, []byte("x")); err == nil {
		t.Error("Compress accepted a compression it does not know")
	}
}
