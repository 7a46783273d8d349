package gofuse

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// FusermountError is a mount that fusermount3, go-fuse's fallback when
// mount(2) is refused, refused. fusermount3 printed why on standard error
// (the process's, or a daemon's log); the error's message says so in the
// user's words instead of go-fuse's, whose number is a raw wait status
// ("fusermount exited with code 256" for exit status 1).
type FusermountError struct {
	Status syscall.WaitStatus // fusermount3's wait status
	Err    error              // go-fuse's error
}

// Error returns go-fuse's message with its report of the failure replaced
// by fusermount3's exit status and a pointer to its own message.
func (e *FusermountError) Error() string {
	why := "fusermount3 refused the mount (its own message says why)"
	if e.Status.Exited() {
		why = fmt.Sprintf("fusermount3 refused the mount (exit status %d; its own message says why)", e.Status.ExitStatus())
	}
	msg := e.Err.Error()
	if m := fusermountExit().FindString(msg); m != "" {
		msg = strings.Replace(msg, m, why, 1)
	}
	return strings.TrimRight(msg, "\n ")
}

// Unwrap returns go-fuse's error.
func (e *FusermountError) Unwrap() error { return e.Err }

// fusermountExit matches go-fuse's report of a failed fusermount, whose
// number is a raw wait status.
var fusermountExit = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`fusermount exited with code (\d+)`)
})

// fusermountError returns err as a *FusermountError when it is go-fuse's
// report of a failed fusermount, else err: go-fuse has no type for it, only
// its text.
func fusermountError(err error) error {
	if err == nil {
		return nil
	}
	m := fusermountExit().FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	ws, perr := strconv.Atoi(m[1])
	if perr != nil {
		ws = -1 // no exit status: the message says so
	}
	return &FusermountError{Status: syscall.WaitStatus(ws), Err: err}
}
