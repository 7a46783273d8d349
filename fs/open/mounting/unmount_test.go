package mounting

import (
	"errors"
	"os"
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

// TestDetachWithoutMount: Detach resolves the mount point without a
// mount, and touches nothing it should not: a directory nothing is
// mounted on (reached through a symbolic link) is no error and Mounted
// false; a missing parent is CleanPoint's error with no point; a mount of
// another type is refused as an *OtherMountError naming it.
func TestDetachWithoutMount(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	want, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, lazy := range []bool{false, true} {
		d, err := Detach(link, lazy, false)
		if err != nil || d != (Detached{Point: want}) {
			t.Errorf("Detach(%s, lazy %v) = %+v, %v; want point %s, not mounted, no error", link, lazy, d, err, want)
		}
	}
	d, err := Detach(filepath.Join(dir, "no", "such"), false, false)
	if !errors.Is(err, os.ErrNotExist) || d != (Detached{}) {
		t.Errorf("missing parent: %+v, %v; want nothing and ErrNotExist", d, err)
	}
	if m, ok, err := At("/proc"); err != nil || !ok || m.FSType == FSType {
		t.Skipf("no proc mount at /proc (%v, %v, %v)", m, ok, err)
	}
	d, err = Detach("/proc", false, false)
	var other *OtherMountError
	if !errors.As(err, &other) || other.Point != "/proc" || d.Mounted ||
		!strings.HasPrefix(err.Error(), "/proc is a proc (") || !strings.HasSuffix(err.Error(), ") mount, not recfs") {
		t.Errorf("Detach(/proc) = %+v, %v; want an *OtherMountError \"/proc is a proc (...) mount, not recfs\", not unmounted", d, err)
	}
}
