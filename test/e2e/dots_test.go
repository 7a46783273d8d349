package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/recfs/recfs/codec/codectest/recfile"
)

// lsInodes lists dir with `ls -fi` (unsorted, every entry, . and ..
// included) and returns name -> inode.
func lsInodes(t *testing.T, dir string) map[string]uint64 {
	t.Helper()
	r := runCmd(t, "ls", "-fi1", dir)
	if r.code != 0 {
		t.Fatalf("ls %s: %s", dir, r.stderr)
	}
	out := map[string]uint64{}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		ino, name, _ := strings.Cut(strings.TrimSpace(l), " ")
		v, err := strconv.ParseUint(ino, 10, 64)
		if err != nil {
			t.Fatalf("ls line %q", l)
		}
		out[name] = v
	}
	return out
}

func inodeOf(t *testing.T, p string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// TestDotEntries: on both backends the root has a real inode number (not
// 0) and every listing has "." (the directory's inode) and ".." (the
// parent's).
func TestDotEntries(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		src := t.TempDir()
		if err := os.Mkdir(filepath.Join(src, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		recfile.WriteLog(t, filepath.Join(src, "sub", "ev.log"), genRecords(48, 3, 20))
		mnt := newMountDir(t)
		startMount(t, src, mnt, "--backend", backend, "--no-cache")
		root := inodeOf(t, mnt)
		if root == 0 {
			t.Errorf("the root reports inode 0")
		}
		for _, c := range []struct{ dir, parent string }{
			{mnt, filepath.Dir(mnt)}, // ls stats ".." of a mount's root: the directory below
			{filepath.Join(mnt, "sub"), mnt},
			{filepath.Join(mnt, "sub", "ev.log"), filepath.Join(mnt, "sub")},
		} {
			ents := lsInodes(t, c.dir)
			self, parent := inodeOf(t, c.dir), inodeOf(t, c.parent)
			if ents["."] != self || ents[".."] != parent {
				t.Errorf("%s: . %d .. %d; want %d and %d (listing %v)", c.dir, ents["."], ents[".."], self, parent, ents)
			}
		}
	})
}
