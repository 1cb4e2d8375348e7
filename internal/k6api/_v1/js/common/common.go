// Package common holds what k6's JavaScript modules share (see
// go.k6.io/k6/v2/js/common).
package common

import (
	"io"
	"reflect"

	"github.com/grafana/sobek"

	v2 "go.k6.io/k6/v2/js/common"
	"go.k6.io/k6/v2/metrics"
)

// Throw throws err into the script from a Go function that JavaScript
// called.
func Throw(rt *sobek.Runtime, err error) { v2.Throw(rt, err) }

// IsNullish reports whether v is missing, undefined or null.
func IsNullish(v sobek.Value) bool { return v2.IsNullish(v) }

// IsAsyncFunction reports whether val is an async function.
func IsAsyncFunction(rt *sobek.Runtime, val sobek.Value) bool { return v2.IsAsyncFunction(rt, val) }

// GetReader reads data given as a string, bytes, an io.Reader or an
// ArrayBuffer.
func GetReader(data any) (io.Reader, error) { return v2.GetReader(data) }

// ToBytes returns data as bytes.
func ToBytes(data any) ([]byte, error) { return v2.ToBytes(data) }

// ToString returns data as a string.
func ToString(data any) (string, error) { return v2.ToString(data) }

// InitContextError is the error of something only the init context may
// do, or something it may not.
type InitContextError = v2.InitContextError

// NewInitContextError returns an InitContextError saying msg.
func NewInitContextError(msg string) InitContextError { return v2.NewInitContextError(msg) }

// InitEnvironment is what Go code sees of the init context.
type InitEnvironment = v2.InitEnvironment

// ApplyCustomUserTags sets every property of keyValues as a tag.
func ApplyCustomUserTags(rt *sobek.Runtime, tagsAndMeta *metrics.TagsAndMeta, keyValues sobek.Value) error {
	return v2.ApplyCustomUserTags(rt, tagsAndMeta, keyValues)
}

// ApplyCustomUserTag sets the tag key to val.
func ApplyCustomUserTag(tagsAndMeta *metrics.TagsAndMeta, key string, val sobek.Value) error {
	return v2.ApplyCustomUserTag(tagsAndMeta, key, val)
}

// ApplyCustomUserMetadata sets the metadata key to val.
func ApplyCustomUserMetadata(tagsAndMeta *metrics.TagsAndMeta, key string, val sobek.Value) error {
	return v2.ApplyCustomUserMetadata(tagsAndMeta, key, val)
}

// FieldName is the JavaScript name of an exported struct field under
// k6's rule.
func FieldName(t reflect.Type, f reflect.StructField) string { return v2.FieldName(t, f) }

// MethodName is the JavaScript name of an exported method under k6's
// rule.
func MethodName(t reflect.Type, m reflect.Method) string { return v2.MethodName(t, m) }

// FieldNameMapper is k6's rule for sobek.Runtime.SetFieldNameMapper.
type FieldNameMapper = v2.FieldNameMapper
