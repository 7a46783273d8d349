package gofuse

import (
	"errors"
	"strings"
	"testing"
)

// TestFusermountError: go-fuse's "fusermount exited with code 256" (a raw
// wait status) reads as fusermount3's exit status and a pointer to its own
// message, wrapped as mounting wraps it; other errors pass unchanged.
func TestFusermountError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
	}{
		{"exit status 1", "fusermount exited with code 256\n", "fusermount3 refused the mount (exit status 1; its own message says why)"},
		{"exit status 2", "fusermount exited with code 512\n", "fusermount3 refused the mount (exit status 2; its own message says why)"},
		{"killed", "fusermount exited with code 9\n", "fusermount3 refused the mount (its own message says why)"},
		{"no number", "fusermount exited with code 99999999999999999999\n", "fusermount3 refused the mount (its own message says why)"},
	} {
		orig := errors.New(tc.in)
		got := fusermountError(orig)
		var fe *FusermountError
		if !errors.As(got, &fe) {
			t.Errorf("%s: %T is no *FusermountError", tc.name, got)
			continue
		}
		if got.Error() != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
		if !errors.Is(got, orig) {
			t.Errorf("%s: the error does not unwrap to go-fuse's", tc.name)
		}
	}
	other := errors.New("no such file")
	if fusermountError(other) != other || fusermountError(nil) != nil {
		t.Error("an ordinary error was rewritten")
	}
}

// FuzzFusermountError: any message reads without a panic, and one that
// names fusermount's exit keeps go-fuse's number out of it.
func FuzzFusermountError(f *testing.F) {
	f.Add("fusermount exited with code 256\n")
	f.Add("x fusermount exited with code 0 y")
	f.Fuzz(func(t *testing.T, msg string) {
		err := fusermountError(errors.New(msg))
		var fe *FusermountError
		if errors.As(err, &fe) && strings.Contains(err.Error(), fusermountExit().FindString(msg)) {
			t.Errorf("%q reads %q: go-fuse's words are still there", msg, err)
		}
	})
}
