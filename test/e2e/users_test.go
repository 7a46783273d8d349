package e2e

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// attackerName is the unprivileged second user of the security tests
// (.ci/run makes it with `useradd -M attacker`).
const attackerName = "attacker"

// soak reports whether the long versions of the attack tests run
// (RECFS_SOAK=1, set by `make soak`); CI runs the short ones.
func soak() bool { return os.Getenv("RECFS_SOAK") == "1" }

// soakDuration returns long under `make soak` and short otherwise.
func soakDuration(short, long time.Duration) time.Duration {
	if soak() {
		return long
	}
	return short
}

// needAttacker returns the uid and gid of the unprivileged test user. The
// tests need root (to mount --allow-other and to switch users); a missing
// user fails under RECFS_TEST_FUSE=1 and skips otherwise.
func needAttacker(t *testing.T) (uid, gid uint32) {
	t.Helper()
	needFUSE(t)
	if os.Geteuid() != 0 {
		t.Skip("security tests switch users: they need root")
	}
	u, err := user.Lookup(attackerName)
	if err != nil {
		if os.Getenv("RECFS_TEST_FUSE") == "1" {
			t.Fatalf("RECFS_TEST_FUSE=1 but no user %q (useradd -M %s): %v", attackerName, attackerName, err)
		}
		t.Skipf("no user %q (useradd -M %s): %v", attackerName, attackerName, err)
	}
	u64, _ := strconv.ParseUint(u.Uid, 10, 32)
	g64, _ := strconv.ParseUint(u.Gid, 10, 32)
	return uint32(u64), uint32(g64)
}

// asAttacker runs a command as the unprivileged test user, with a timeout.
func asAttacker(t *testing.T, name string, args ...string) result {
	t.Helper()
	uid, gid := needAttacker(t)
	return runCmdCred(t, &syscall.Credential{Uid: uid, Gid: gid, NoSetGroups: true}, name, args...)
}

// runCmdCred is runCmd under the given credentials.
func runCmdCred(t *testing.T, cred *syscall.Credential, name string, args ...string) result {
	t.Helper()
	c := exec.Command(name, args...)
	c.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	c.Dir = "/"
	return runPrepared(t, c)
}

// publicDir returns a fresh directory that every user can traverse and
// read (0755 all the way up), removed at the end of the test: t.TempDir()
// is private to root.
func publicDir(t *testing.T) string {
	t.Helper()
	base := "/tmp/recfs-e2e-public"
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(base, "t-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// newPublicMountDir is newMountDir inside publicDir, so another user can
// reach the mount.
func newPublicMountDir(t *testing.T, parent string) string {
	t.Helper()
	dir := filepath.Join(parent, "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mountDirs.Store(dir, true)
	return dir
}

// publicBin copies the binaries under test into dir (a publicDir), where
// the unprivileged user may run them: the lean recfs, and recfs-full
// beside it (which the lean one hands mounts and S3 to). It returns the
// lean one's path.
func publicBin(t *testing.T, dir string) string {
	t.Helper()
	for _, c := range []struct{ from, to string }{{fullBin, "recfs-full"}, {bin, "recfs"}} {
		b, err := os.ReadFile(c.from)
		if err != nil {
			t.Fatal(err)
		}
		writeExec(t, filepath.Join(dir, c.to), b)
	}
	return filepath.Join(dir, "recfs")
}

// writeExec writes an executable file the test then runs. It holds
// syscall.ForkLock while the file is open for writing: a process another
// parallel test forks meanwhile would inherit the descriptor until its
// exec, and running the file then fails with ETXTBSY ("text file busy").
func writeExec(t *testing.T, path string, data []byte) {
	t.Helper()
	syscall.ForkLock.Lock()
	err := os.WriteFile(path, data, 0o755)
	syscall.ForkLock.Unlock()
	if err != nil {
		t.Fatal(err)
	}
}
