package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/codectest/recfile"
)

// TestMountRefusedByFusermount: a user mounting on a directory they cannot
// write gets fusermount3's own reason and recfs's plain line after it,
// never go-fuse's raw wait status ("fusermount exited with code 256").
func TestMountRefusedByFusermount(t *testing.T) {
	needAttacker(t)
	t.Parallel()
	pub := publicDir(t)
	src := filepath.Join(pub, "f.log")
	recfile.WriteLog(t, src, [][]byte{[]byte("x")})
	if err := os.Chmod(src, 0o644); err != nil {
		t.Fatal(err)
	}
	mnt := newPublicMountDir(t, pub) // root's, 0755: not the user's to mount on
	r := asAttacker(t, publicBin(t, pub), "mount", "--no-cache", src, mnt)
	if r.code != 1 || strings.Contains(r.stderr, "exited with code") ||
		!strings.Contains(r.stderr, "fusermount3 refused the mount (exit status 1; its own message says why)") ||
		!strings.Contains(r.stderr, "fusermount3: ") {
		t.Errorf("mount on another user's directory: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if got := mountedAt(mnt); got != "" {
		t.Errorf("%s is mounted (%s)", mnt, got)
	}
}
