package daemon

import (
	"errors"
	"testing"
)

// TestStartErrorDescribe: each way a child fails to come up reads as what
// was to become ready and what is left, then the child's early standard
// error that neither the message nor a skipped prefix says already.
func TestStartErrorDescribe(t *testing.T) {
	t.Parallel()
	killed := errors.New("signal: terminated")
	stderr := []byte("time=x level=info msg=starting\nrecfs: mount a on b: refused\nfusermount3: no access\n")
	for _, tc := range []struct {
		name string
		e    StartError
		want string
	}{
		{"message", StartError{Message: "mount a on b: refused", Code: 3, stderr: stderr},
			"mount a on b: refused\nfusermount3: no access"},
		{"message said it", StartError{Message: "mount a on b: refused\nfusermount3: no access", stderr: stderr},
			"mount a on b: refused\nfusermount3: no access"},
		{"no verdict", StartError{Err: killed},
			"daemon exited before the mount at b was ready (signal: terminated)"},
		{"interrupted", StartError{Interrupted: true, Message: "ignored", Err: killed},
			"interrupted before the mount at b was ready; nothing is mounted"},
		{"interrupted when ready", StartError{Interrupted: true, Ready: true},
			"interrupted as the mount at b became ready; the daemon ended it, nothing is mounted"},
		{"interrupted when ready, not ended", StartError{Interrupted: true, Ready: true, Err: killed, stderr: stderr},
			"interrupted as the mount at b became ready, and the daemon failed to end it (signal: terminated): see its log\nfusermount3: no access"},
	} {
		if got := tc.e.Describe("the mount at b", "nothing is mounted", "recfs: "); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
