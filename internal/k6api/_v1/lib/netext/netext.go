// Package netext holds k6's names of TLS versions and OCSP answers (see
// go.k6.io/k6/v2/lib/netext).
package netext

import v2 "go.k6.io/k6/v2/lib/netext"

// The values k6 gives TLS versions and OCSP states and reasons.
//
//nolint:revive,stylecheck // k6's names
const (
	OCSP_STATUS_GOOD                   = v2.OCSP_STATUS_GOOD
	OCSP_STATUS_REVOKED                = v2.OCSP_STATUS_REVOKED
	OCSP_STATUS_SERVER_FAILED          = v2.OCSP_STATUS_SERVER_FAILED
	OCSP_STATUS_UNKNOWN                = v2.OCSP_STATUS_UNKNOWN
	OCSP_REASON_UNSPECIFIED            = v2.OCSP_REASON_UNSPECIFIED
	OCSP_REASON_KEY_COMPROMISE         = v2.OCSP_REASON_KEY_COMPROMISE
	OCSP_REASON_CA_COMPROMISE          = v2.OCSP_REASON_CA_COMPROMISE
	OCSP_REASON_AFFILIATION_CHANGED    = v2.OCSP_REASON_AFFILIATION_CHANGED
	OCSP_REASON_SUPERSEDED             = v2.OCSP_REASON_SUPERSEDED
	OCSP_REASON_CESSATION_OF_OPERATION = v2.OCSP_REASON_CESSATION_OF_OPERATION
	OCSP_REASON_CERTIFICATE_HOLD       = v2.OCSP_REASON_CERTIFICATE_HOLD
	OCSP_REASON_REMOVE_FROM_CRL        = v2.OCSP_REASON_REMOVE_FROM_CRL
	OCSP_REASON_PRIVILEGE_WITHDRAWN    = v2.OCSP_REASON_PRIVILEGE_WITHDRAWN
	OCSP_REASON_AA_COMPROMISE          = v2.OCSP_REASON_AA_COMPROMISE
	TLS_1_0                            = v2.TLS_1_0
	TLS_1_1                            = v2.TLS_1_1
	TLS_1_2                            = v2.TLS_1_2
	TLS_1_3                            = v2.TLS_1_3
)

// TLSInfo is a connection's TLS version and cipher suite by name.
type TLSInfo = v2.TLSInfo

// OCSP is what a connection's stapled OCSP answer said.
type OCSP = v2.OCSP

// Dialer is the type of a VU's State.Dialer.
type Dialer = v2.Dialer
