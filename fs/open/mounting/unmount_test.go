package mounting

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnmountHelperErrorWrapped: when umount(2) cannot be used and the
// fusermount3 helper fails too, the error names the helper and its words
// and wraps the helper's exit error (errors.As finds it).
func TestUnmountHelperErrorWrapped(t *testing.T) {
	if _, err := exec.LookPath("fusermount3"); err != nil {
		t.Skip("no fusermount3")
	}
	// A path that does not exist: umount(2) fails with ENOENT, which is
	// neither "busy" nor "not mounted", so the helper is tried.
	err := Unmount(filepath.Join(t.TempDir(), "missing"), false)
	if err == nil || !strings.Contains(err.Error(), "fusermount") {
		t.Fatalf("unmount of a missing path: %v; want the helper's failure", err)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Errorf("error %q does not wrap the helper's exit error", err)
	}
}
