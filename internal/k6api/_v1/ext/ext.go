// Package ext is k6's registry of extensions (see go.k6.io/k6/v2/ext).
package ext

import v2 "go.k6.io/k6/v2/ext"

// ExtensionType is the kind of an extension.
type ExtensionType = v2.ExtensionType

// The kinds of extension.
const (
	JSExtension           = v2.JSExtension
	OutputExtension       = v2.OutputExtension
	SecretSourceExtension = v2.SecretSourceExtension
	SubcommandExtension   = v2.SubcommandExtension
)

// Extension is one registered extension.
type Extension = v2.Extension

// Register records mod as the extension name of kind typ.
func Register(name string, typ ExtensionType, mod any) { v2.Register(name, typ, mod) }

// Get returns a copy of the extensions of kind typ, by name.
func Get(typ ExtensionType) map[string]*Extension { return v2.Get(typ) }

// GetAll lists the JavaScript, output and subcommand extensions.
func GetAll() []*Extension { return v2.GetAll() }
