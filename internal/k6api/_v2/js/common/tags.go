package common

import (
	"fmt"
	"reflect"

	"github.com/grafana/sobek"

	"go.k6.io/k6/v2/metrics"
)

// ApplyCustomUserTags sets every property of keyValues (nullish: none) as
// a tag of tagsAndMeta.
func ApplyCustomUserTags(rt *sobek.Runtime, tagsAndMeta *metrics.TagsAndMeta, keyValues sobek.Value) error {
	if IsNullish(keyValues) {
		return nil
	}
	obj := keyValues.ToObject(rt)
	for _, key := range obj.Keys() {
		if err := ApplyCustomUserTag(tagsAndMeta, key, obj.Get(key)); err != nil {
			return err
		}
	}
	return nil
}

// ApplyCustomUserTag sets the tag key to val, a string, boolean or number.
func ApplyCustomUserTag(tagsAndMeta *metrics.TagsAndMeta, key string, val sobek.Value) error {
	if !scalar(val) {
		return fmt.Errorf("invalid value for metric tag '%s': "+
			"only String, Boolean and Number types are accepted as a metric tag values", key)
	}
	tagsAndMeta.SetTag(key, val.String())
	return nil
}

// ApplyCustomUserMetadata sets the metadata key to val, a string, boolean
// or number.
func ApplyCustomUserMetadata(tagsAndMeta *metrics.TagsAndMeta, key string, val sobek.Value) error {
	if !scalar(val) {
		return fmt.Errorf("invalid value for metric metadata '%s': "+
			"only String, Boolean and Number types are accepted as a metric metadata value", key)
	}
	tagsAndMeta.SetMetadata(key, val.String())
	return nil
}

// scalar reports whether val is a string, boolean or number.
func scalar(val sobek.Value) bool {
	if val == nil {
		return false
	}
	t := val.ExportType()
	if t == nil {
		return false
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int64, reflect.Float64:
		return true
	}
	return false
}
