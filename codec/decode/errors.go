package decode

import (
	"errors"
	"fmt"
)

// Sentinel errors; every *Error matches one of them under [errors.Is].
var (
	// ErrMisfit means a record is not what its decoder reads: a count
	// that overruns the payload, trailing bytes, an impossible tag.
	ErrMisfit = errors.New("record does not fit the decoder")
	// ErrTooLarge means a record is larger than a session renders.
	ErrTooLarge = errors.New("record too large to decode")
	// ErrLimit means a rendering grew past MaxOutput.
	ErrLimit = errors.New("decoded text too large")
)

// Error says why a record did not decode.
type Error struct {
	Decoder string // the decoder's name ("batch"); set by the Session
	N       int64  // record number; set by the Session
	At      int64  // byte offset in the record's payload, or -1
	Reason  string // what failed
	Err     error  // ErrMisfit, ErrTooLarge, ErrLimit or a read error
}

// Error says which decoder failed on which record, where and why.
func (e *Error) Error() string {
	s := "decode"
	if e.Decoder != "" {
		s += " " + e.Decoder
	}
	s += fmt.Sprintf(": record %d", e.N)
	if e.At >= 0 {
		s += fmt.Sprintf(" at byte %d", e.At)
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.Err != nil && !errors.Is(e.Err, ErrMisfit) {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the sentinel or read error.
func (e *Error) Unwrap() error { return e.Err }

// Misfit returns the error of a record that does not fit the decoder,
// at byte at of its payload (-1: the whole record).
func Misfit(at int, format string, args ...any) error {
	return &Error{At: int64(at), Reason: fmt.Sprintf(format, args...), Err: ErrMisfit}
}
