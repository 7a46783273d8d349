package fusetest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// NeedFUSE decides whether a test that mounts through the kernel runs, by
// RECFS_TEST_FUSE: "0" skips it; "1" requires it, so a missing /dev/fuse
// or helper program (fusermount3, say) fails the test; "" runs it when
// all of them are present and skips it otherwise.
func NeedFUSE(t testing.TB, helpers ...string) {
	t.Helper()
	mode := os.Getenv("RECFS_TEST_FUSE")
	if mode == "0" {
		t.Skip("RECFS_TEST_FUSE=0")
	}
	var missing []string
	if _, err := os.Stat("/dev/fuse"); err != nil {
		missing = append(missing, err.Error())
	}
	for _, h := range helpers {
		if _, err := exec.LookPath(h); err != nil {
			missing = append(missing, err.Error())
		}
	}
	if len(missing) == 0 {
		return
	}
	if mode == "1" {
		t.Fatalf("RECFS_TEST_FUSE=1 but %s", strings.Join(missing, "; "))
	}
	t.Skipf("no FUSE: %s", strings.Join(missing, "; "))
}
