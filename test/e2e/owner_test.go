package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/recfs/recfs/codec/codectest/recfile"
)

// TestOwnerFlags mounts with --uid, --gid and --umask on both backends and
// checks what stat(2) reports through the kernel, then that --allow-other
// keeps the kernel's permission checks: with uid 0 and umask 077 the
// unprivileged user may list nothing, with umask 022 it reads a record.
func TestOwnerFlags(t *testing.T) {
	uid, _ := needAttacker(t)
	eachBackend(t, func(t *testing.T, backend string) {
		pub := publicDir(t)
		src := filepath.Join(pub, "ev.log")
		recs := genRecords(44, 4, 40)
		recfile.WriteLog(t, src, recs)
		if err := os.Chmod(src, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			umask         string
			dirPerm, perm uint32
			attackerReads bool
			owner, group  uint32
		}{
			{"077", 0o500, 0o400, false, 0, 0},
			{"022", 0o555, 0o444, true, 4242, 4343},
		} {
			parent := filepath.Join(pub, "m"+tc.umask)
			if err := os.Mkdir(parent, 0o755); err != nil {
				t.Fatal(err)
			}
			mnt := newPublicMountDir(t, parent)
			m := startMount(t, src, mnt, "--backend", backend, "--no-cache", "--allow-other",
				"--uid", fmt.Sprint(tc.owner), "--gid", fmt.Sprint(tc.group), "--umask", tc.umask)
			for _, c := range []struct {
				path string
				perm uint32
			}{{mnt, tc.dirPerm}, {filepath.Join(mnt, "000002"), tc.perm}, {filepath.Join(mnt, ".recfs"), tc.perm}} {
				var st syscall.Stat_t
				if err := syscall.Stat(c.path, &st); err != nil {
					t.Fatal(err)
				}
				if st.Uid != tc.owner || st.Gid != tc.group || st.Mode&0o7777 != c.perm {
					t.Errorf("umask %s: %s: uid %d gid %d mode %o; want %d %d %o", tc.umask, c.path, st.Uid, st.Gid, st.Mode&0o7777, tc.owner, tc.group, c.perm)
				}
			}
			r := asAttacker(t, "cat", filepath.Join(mnt, "000002"))
			if got := r.code == 0 && r.stdout == string(recs[2]); got != tc.attackerReads {
				t.Errorf("umask %s: uid %d reading a record: exit %d %q; want readable=%v", tc.umask, uid, r.code, r.stderr, tc.attackerReads)
			}
			m.cleanup(t)
		}
	})
}
