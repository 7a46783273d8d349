package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestUnmountMany: `recfs unmount A B` ends both mounts, as umount(8)
// takes several; --if-mounted (-q) then finds nothing mounted and is
// silent with status 0, while without it the same call fails naming each
// directory (and the missing one).
func TestUnmountMany(t *testing.T) {
	needFUSE(t)
	t.Parallel()
	src := tempLog(t, "f.log", [][]byte{[]byte("x")})
	a, b := newMountDir(t), newMountDir(t)
	ma, mb := startMount(t, src, a), startMount(t, src, b)
	if r := runRecfs(t, "unmount", a, b); r.code != 0 || r.stdout != "unmounted: "+a+"\nunmounted: "+b+"\n" {
		t.Fatalf("recfs unmount A B: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, m := range []*mount{ma, mb} {
		if code := m.wait(t); code != 0 {
			t.Errorf("mount of %s exited %d", m.dir, code)
		}
		if got := mountedAt(m.dir); got != "" {
			t.Errorf("%s still mounted (%s)", m.dir, got)
		}
	}
	missing := filepath.Join(t.TempDir(), "never")
	if r := runRecfs(t, "unmount", "-q", a, b, missing); r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Errorf("recfs unmount -q of unmounted dirs: exit %d, stdout %q, stderr %q; want 0 and silence", r.code, r.stdout, r.stderr)
	}
	r := runRecfs(t, "unmount", a, missing)
	if r.code != 1 || !strings.Contains(r.stderr, a+": not a mount point") || !strings.Contains(r.stderr, missing) {
		t.Errorf("recfs unmount of unmounted dirs: exit %d, stderr %q; want 1 naming both", r.code, r.stderr)
	}
}
