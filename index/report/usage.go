package report

import (
	"errors"
	"fmt"
)

// UsageError reports a command line the user spelt wrong (a malformed
// selection, a flag a table's format does not take): the command line, not
// the source, is at fault.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a [UsageError] with a formatted message.
func Usagef(format string, a ...any) error { return &UsageError{fmt.Errorf(format, a...)} }

// IsUsage reports whether err is, or wraps, a [UsageError].
func IsUsage(err error) bool {
	var ue *UsageError
	return errors.As(err, &ue)
}
