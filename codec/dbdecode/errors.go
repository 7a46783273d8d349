package dbdecode

import (
	"errors"
	"fmt"
)

// Sentinel errors; every *DecodeError matches one of them under [errors.Is].
var (
	// ErrMalformed means the record ends early or holds a field that
	// cannot be what its tag says.
	ErrMalformed = errors.New("dbdecode: malformed record")
	// ErrUnknownTag means the record holds a tag this package does not know.
	ErrUnknownTag = errors.New("dbdecode: unknown tag")
)

// DecodeError says why a record did not decode completely. The text that
// came with it already holds an "error:" or "unknown-tag" line.
type DecodeError struct {
	At     int    // byte offset in the record
	Reason string // what failed
	Err    error  // ErrMalformed or ErrUnknownTag
}

// Error says what failed and where.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("dbdecode: %s at byte %d", e.Reason, e.At)
}

// Unwrap returns the sentinel error.
func (e *DecodeError) Unwrap() error { return e.Err }
