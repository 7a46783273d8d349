package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// needMountHelper skips unless mount(8), mount.fuse3 and unshare(1) are
// present and we are root (the tests make a private mount namespace).
func needMountHelper(t *testing.T) {
	t.Helper()
	needFUSE(t)
	if os.Geteuid() != 0 {
		t.Skip("mount(8) tests need root")
	}
	for _, p := range []string{"mount", "umount", "unshare", "mount.fuse3"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("no %s: %v", p, err)
		}
	}
}

// inMountNS runs script with sh in a private mount namespace where
// /usr/local/bin holds only copies of the two recfs binaries under test,
// installed as the README says (install -m 755 bin/recfs bin/recfs-full
// /usr/local/bin/), and /usr/local/sbin nothing: mount.fuse3 finds the
// helper on its fixed PATH (mount(8) clears PATH), and nothing outside
// the namespace sees the change. Whatever the script leaves mounted is
// detached when it ends, so no daemon keeps the namespace alive.
func inMountNS(t *testing.T, mnt, script string) result {
	t.Helper()
	dir := t.TempDir()
	publicBin(t, dir)
	return inMountNSWith(t, dir, mnt, script)
}

// inMountNSWith is inMountNS with dir, whatever it holds, as
// /usr/local/bin.
func inMountNSWith(t *testing.T, dir, mnt, script string) result {
	t.Helper()
	empty := t.TempDir()
	full := fmt.Sprintf("mount --bind %s /usr/local/bin || exit 99\nmount --bind %s /usr/local/sbin || exit 99\ntrap 'umount -l %s 2>/dev/null' EXIT\n%s", dir, empty, mnt, script)
	c := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", full)
	// As from a login shell: mount(8) must not depend on our environment.
	// XDG_CACHE_HOME keeps saved indexes in the suite's scratch cache.
	c.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + os.Getenv("HOME"), "XDG_CACHE_HOME=" + os.Getenv("XDG_CACHE_HOME"), "XDG_STATE_HOME=" + os.Getenv("XDG_STATE_HOME")}
	return runPrepared(t, c)
}

// daemonPidGone waits until the process whose "daemon pid N" stdout
// names has exited.
func daemonPidGone(t *testing.T, out string) {
	t.Helper()
	m := regexp.MustCompile(`daemon pid (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no daemon pid in %q", out)
	}
	pid, _ := strconv.Atoi(m[1])
	deadline := time.Now().Add(exitTimeout)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("daemon %d still alive %v after umount", pid, exitTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// recordCount returns the record count recfs info reports for src.
func recordCount(t *testing.T, src string) int {
	t.Helper()
	r := runRecfs(t, "info", "--json", "--no-cache", src)
	if r.code != 0 {
		t.Fatalf("info %s: %d %s", src, r.code, r.stderr)
	}
	var inf struct{ Records int }
	if err := json.Unmarshal([]byte(r.stdout), &inf); err != nil {
		t.Fatal(err)
	}
	return inf.Records
}

// TestMountTypeFuseRecfs mounts through mount(8) — `mount -t fuse.recfs
// SRC MNT -o ...` — read-only with ownership options and read-write on the
// bazil backend, reads and writes through the mount, and unmounts with
// umount(8), after which the daemon mount.fuse3 started must be gone.
func TestMountTypeFuseRecfs(t *testing.T) {
	needMountHelper(t)
	recs := genRecords(41, 5, 100)
	for _, tc := range []struct {
		name, opts string
		rw         bool
	}{
		{"ro", "ro,allow_other,uid=1234,gid=2345,umask=027,dev,suid,exec,auto,nouser,defaults", false},
		{"rw", "rw,backend=bazil,allow_other,nodev,nosuid,noatime", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := tempLog(t, "ev.log", recs)
			mnt := newMountDir(t)
			script := fmt.Sprintf(`
mount -t fuse.recfs %[1]s %[2]s -o %[3]s || exit 10
echo "TYPE $(awk '$5 == "%[2]s" {for (i = 7; i < NF; i++) if ($i == "-") print $(i+1), $6}' /proc/self/mountinfo)"
echo "STAT $(stat -c '%%u %%g %%a' %[2]s/000003) DIR $(stat -c '%%u %%g %%a' %[2]s)"
echo "REC3 $(cat %[2]s/000003) END"
if echo appended > %[2]s/new 2>/dev/null; then echo WROTE; else echo REFUSED; fi
umount %[2]s || exit 11
echo UNMOUNTED
`, src, mnt, tc.opts)
			r := inMountNS(t, mnt, script)
			if r.code != 0 {
				t.Fatalf("script exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			out := r.stdout
			if !strings.Contains(out, "UNMOUNTED") || !strings.Contains(out, "ready:") {
				t.Fatalf("no mount or no umount:\n%s\n%s", out, r.stderr)
			}
			if !strings.Contains(out, "REC3 "+string(recs[3])+" END") {
				t.Errorf("record 3 through the mount differs:\n%s", out)
			}
			daemonPidGone(t, out)
			wantMode := "ro"
			if tc.rw {
				wantMode = "rw"
			}
			if m := regexp.MustCompile(`TYPE (\S+) (\S+)`).FindStringSubmatch(out); m == nil || m[1] != "fuse.recfs" || !strings.HasPrefix(m[2], wantMode) {
				t.Errorf("mountinfo line %q: want fuse.recfs, %s", m, wantMode)
			}
			st := regexp.MustCompile(`STAT (\d+) (\d+) (\d+) DIR (\d+) (\d+) (\d+)`).FindStringSubmatch(out)
			if st == nil {
				t.Fatalf("no stat line in %q", out)
			}
			if tc.rw {
				if !strings.Contains(out, "WROTE") {
					t.Errorf("write through a -o rw mount refused:\n%s", out)
				}
				if n := recordCount(t, src); n != len(recs)+1 {
					t.Errorf("source has %d records after an append through -o rw; want %d", n, len(recs)+1)
				}
				return
			}
			if !strings.Contains(out, "REFUSED") {
				t.Errorf("write through a -o ro mount succeeded:\n%s", out)
			}
			if n := recordCount(t, src); n != len(recs) {
				t.Errorf("source has %d records after a -o ro mount; want %d", n, len(recs))
			}
			if got := strings.Join(st[1:], " "); got != "1234 2345 440 1234 2345 550" {
				t.Errorf("uid gid mode of a record and the root: %s; want 1234 2345 440 1234 2345 550", got)
			}
		})
	}
}

// TestMountFstab mounts an fstab entry with `mount MNT` (from a temporary
// fstab given with -T, so the system's is untouched), with the options a
// real fstab line carries, and unmounts it with umount(8).
func TestMountFstab(t *testing.T) {
	needMountHelper(t)
	recs := genRecords(42, 3, 50)
	src := tempLog(t, "ev.log", recs)
	mnt := newMountDir(t)
	cache := t.TempDir()
	fstab := filepath.Join(t.TempDir(), "fstab")
	line := fmt.Sprintf("%s %s fuse.recfs ro,noauto,nofail,_netdev,x-systemd.automount,allow_other,uid=4321,cache_dir=%s 0 0\n", src, mnt, cache)
	if err := os.WriteFile(fstab, []byte("# test fstab\n"+line), 0o644); err != nil {
		t.Fatal(err)
	}
	r := inMountNS(t, mnt, fmt.Sprintf(`
mount -T %[1]s %[2]s || exit 10
echo "OWNER $(stat -c %%u %[2]s/000001) COUNT $(ls %[2]s | wc -l)"
umount %[2]s || exit 11
echo UNMOUNTED
`, fstab, mnt))
	if r.code != 0 {
		t.Fatalf("script exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, fmt.Sprintf("OWNER 4321 COUNT %d", len(recs))) || !strings.Contains(r.stdout, "UNMOUNTED") {
		t.Fatalf("fstab mount: %s\n%s", r.stdout, r.stderr)
	}
	daemonPidGone(t, r.stdout)
	// cache_dir= reached the index: the saved index is there.
	if ents, _ := os.ReadDir(cache); len(ents) == 0 {
		t.Errorf("cache_dir=%s holds nothing after the mount", cache)
	}
}

// TestMountHelperUnknownOption: an option recfs does not know fails the
// mount with every unknown option named, and nothing is mounted.
func TestMountHelperUnknownOption(t *testing.T) {
	needMountHelper(t)
	src := tempLog(t, "ev.log", genRecords(43, 2, 20))
	mnt := newMountDir(t)
	r := inMountNS(t, mnt, fmt.Sprintf(`
mount -t fuse.recfs %s %s -o ro,colour=blue,allow_other,turbo
echo "EXIT $?"
awk '$5 == "%s"' /proc/self/mountinfo
`, src, mnt, mnt))
	if !strings.Contains(r.stdout, "EXIT ") || strings.Contains(r.stdout, "EXIT 0") {
		t.Fatalf("mount with unknown options did not fail: %s\n%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "colour=blue") || !strings.Contains(r.stderr, "turbo") {
		t.Errorf("error does not name the unknown options: %q", r.stderr)
	}
	if strings.Contains(r.stdout, "fuse.recfs") {
		t.Errorf("something was mounted: %s", r.stdout)
	}
}

// TestMountHelperLeanAlone: with only the lean recfs installed (no
// recfs-full beside it nor on mount.fuse3's PATH), mount(8) fails with
// status 1 and the message saying what to install, and nothing is
// mounted.
func TestMountHelperLeanAlone(t *testing.T) {
	needMountHelper(t)
	src := tempLog(t, "ev.log", genRecords(44, 2, 20))
	mnt := newMountDir(t)
	dir := t.TempDir()
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	writeExec(t, filepath.Join(dir, "recfs"), b)
	r := inMountNSWith(t, dir, mnt, fmt.Sprintf(`
mount -t fuse.recfs %s %s -o ro
echo "EXIT $?"
awk '$5 == "%s"' /proc/self/mountinfo
`, src, mnt, mnt))
	if !strings.Contains(r.stdout, "EXIT 1\n") {
		t.Errorf("mount with the lean recfs alone: want status 1, got %s\n%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "recfs-full, which is not installed") {
		t.Errorf("mount with the lean recfs alone: stderr %q does not say recfs-full is missing", r.stderr)
	}
	if strings.Contains(r.stdout, "fuse.recfs") {
		t.Errorf("something was mounted: %s", r.stdout)
	}
}
