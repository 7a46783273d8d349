package e2e

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest/recfile"
)

// Tests of what an unprivileged user ("attacker", who can write inside
// the source tree) can get out of a root daemon serving a directory with
// --allow-other. Every mount runs on both backends.

// securityBackends are the backends every security test runs on.
var securityBackends = []string{"gofuse", "bazil"}

// secretMarker is in every byte a test keeps from the attacker.
const secretMarker = "TOP-SECRET-7c1e"

// attackSetup is a public test directory with a source tree (0755, with a
// 0777 subdirectory shared/ the attacker writes to), a root-only
// directory secret/ (0700) holding a 0600 plain file and a 0600 record
// file full of secretMarker, and a mount point.
type attackSetup struct {
	dir, tree, shared, mnt string
	secretDir, secretFile  string
	secretLog              string
}

func newAttackSetup(t *testing.T) *attackSetup {
	t.Helper()
	needAttacker(t)
	dir := publicDir(t)
	s := &attackSetup{dir: dir, tree: filepath.Join(dir, "tree"), secretDir: filepath.Join(dir, "secret")}
	s.shared = filepath.Join(s.tree, "shared")
	for _, d := range []struct {
		path string
		mode os.FileMode
	}{{s.tree, 0o755}, {s.shared, 0o777}, {s.secretDir, 0o700}} {
		if err := os.Mkdir(d.path, d.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d.path, d.mode); err != nil {
			t.Fatal(err)
		}
	}
	s.secretFile = filepath.Join(s.secretDir, "secret.txt")
	if err := os.WriteFile(s.secretFile, bytes.Repeat([]byte(secretMarker+"\n"), 7000), 0o600); err != nil {
		t.Fatal(err)
	}
	s.secretLog = filepath.Join(s.secretDir, "secret.log")
	recfile.WriteLog(t, s.secretLog, [][]byte{[]byte(secretMarker + " record 0"), []byte(secretMarker + " record 1")})
	if err := os.Chmod(s.secretLog, 0o600); err != nil {
		t.Fatal(err)
	}
	s.mnt = newPublicMountDir(t, dir)
	return s
}

// mountAs mounts the tree as root with --allow-other on backend.
func (s *attackSetup) mount(t *testing.T, backend string, extra ...string) *mount {
	t.Helper()
	needBackend(t, backend)
	args := append([]string{"--allow-other", "--no-cache", "--backend", backend}, extra...)
	return startMount(t, s.tree, s.mnt, args...)
}

// publicLog writes public.log, a record file of two records anyone may
// read, beside the tree and returns its path.
func (s *attackSetup) publicLog(t *testing.T) string {
	t.Helper()
	p := filepath.Join(s.dir, "public.log")
	recfile.WriteLog(t, p, [][]byte{[]byte("public record 0"), []byte("public record 1")})
	return p
}

// servesSecret reports whether record 0 of the record directory dir, read
// as root, holds secretMarker.
func servesSecret(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "000000"))
	return err == nil && bytes.Contains(b, []byte(secretMarker))
}

// attackerSh runs script with sh -c as the attacker.
func attackerSh(t *testing.T, script string) result {
	t.Helper()
	return asAttacker(t, "sh", "-c", script)
}

// TestSymlinkSwapFile: the attacker makes a file in the tree, reads it
// through the mount, then replaces it with a symlink to a root-only file
// and reads the (cached) name again. The daemon must not follow the link:
// neither for a passed-through file nor for a record file not indexed yet.
func TestSymlinkSwapFile(t *testing.T) {
	for _, backend := range securityBackends {
		t.Run(backend, func(t *testing.T) {
			s := newAttackSetup(t)
			// A readable record file the attacker copies into the tree.
			pubLog := s.publicLog(t)
			m := s.mount(t, backend)

			g, mg := filepath.Join(s.shared, "g.txt"), filepath.Join(s.mnt, "shared", "g.txt")
			r := attackerSh(t, fmt.Sprintf(`yes plain | head -c 100000 > %[1]s && cat %[2]s | wc -c &&
				rm %[1]s && ln -s %[3]s %[1]s && cat %[2]s`, g, mg, s.secretFile))
			if !strings.HasPrefix(r.stdout, "100000\n") {
				t.Errorf("first read of the attacker's own file through the mount: %q %q", r.stdout, r.stderr)
			}
			if strings.Contains(r.stdout, secretMarker) {
				t.Errorf("file swapped for a symlink: the attacker read the root-only file through the mount\n%.300s", m.stderr)
			}

			l, ml := filepath.Join(s.shared, "r.log"), filepath.Join(s.mnt, "shared", "r.log")
			r = attackerSh(t, fmt.Sprintf(`cp %[4]s %[1]s && stat %[2]s >/dev/null &&
				rm %[1]s && ln -s %[3]s %[1]s && cat %[2]s/000000 %[2]s/000001 %[2]s/.recfs; ls %[2]s`, l, ml, s.secretLog, pubLog))
			if strings.Contains(r.stdout, secretMarker) {
				t.Errorf("record file swapped for a symlink: the attacker read the root-only log through the mount\n%.300s", r.stdout)
			}
			// Root reading through the mount does not get it either.
			if servesSecret(ml) {
				t.Fatalf("the swapped record file serves the link's target")
			}
		})
	}
}

// TestSymlinkSwapFollowed: with --follow, a refresh looks at the source's
// path again; a record file swapped for a symbolic link to a root-only log
// after it was indexed must not be reopened through the link, in a tree
// mount or a single-file mount.
func TestSymlinkSwapFollowed(t *testing.T) {
	for _, backend := range securityBackends {
		for _, single := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/single=%v", backend, single), func(t *testing.T) {
				s := newAttackSetup(t)
				pubLog := s.publicLog(t)
				l := filepath.Join(s.shared, "r.log")
				if err := os.WriteFile(l, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chown(l, 1001, 1001); err != nil {
					t.Fatal(err)
				}
				r := attackerSh(t, fmt.Sprintf("cat %s > %s", pubLog, l))
				if r.code != 0 {
					t.Fatalf("attacker's copy: %q", r.stderr)
				}
				src, ml := s.tree, filepath.Join(s.mnt, "shared", "r.log")
				if single {
					src, ml = l, s.mnt
				}
				needBackend(t, backend)
				startMount(t, src, s.mnt, "--allow-other", "--no-cache", "--backend", backend, "--follow", "--follow-interval", "20ms")
				r = attackerSh(t, fmt.Sprintf("cat %[1]s/000000 && rm %[2]s && ln -s %[3]s %[2]s && sleep 0.5; cat %[1]s/000000 %[1]s/000001; ls %[1]s", ml, l, s.secretLog))
				if !strings.HasPrefix(r.stdout, "public record 0") {
					t.Errorf("first read: %q %q", r.stdout, r.stderr)
				}
				if strings.Contains(r.stdout, secretMarker) {
					t.Errorf("followed record file swapped for a symlink: the attacker read the root-only log\n%.300s", r.stdout)
				}
				if servesSecret(ml) {
					t.Errorf("the followed record file serves the link's target")
				}
			})
		}
	}
}

// TestSymlinkSwapDir: the attacker makes a directory, lists it through the
// mount, then replaces it with a symlink to a root-only directory holding
// a readable plain file and a readable record file, and reads them
// through the cached directory.
func TestSymlinkSwapDir(t *testing.T) {
	for _, backend := range securityBackends {
		t.Run(backend, func(t *testing.T) {
			s := newAttackSetup(t)
			for _, p := range []string{s.secretFile, s.secretLog} {
				if err := os.Chmod(p, 0o644); err != nil { // readable, but in a 0700 directory
					t.Fatal(err)
				}
			}
			s.mount(t, backend)
			sub, msub := filepath.Join(s.shared, "sub"), filepath.Join(s.mnt, "shared", "sub")
			r := attackerSh(t, fmt.Sprintf(`mkdir %[1]s && ls %[2]s && rmdir %[1]s && ln -s %[3]s %[1]s;
				cat %[2]s/secret.txt; cat %[2]s/secret.log/000000; ls %[2]s`, sub, msub, s.secretDir))
			if strings.Contains(r.stdout, secretMarker) || strings.Contains(r.stdout, "secret.") {
				t.Fatalf("directory swapped for a symlink: the attacker saw the root-only directory through the mount\n%.300s", r.stdout)
			}
		})
	}
}

// TestAllowOtherPermissions: the mount shows the source's permission bits,
// so default_permissions keeps other users out of a 0600 record file and a
// 0700 directory, while root reads them.
func TestAllowOtherPermissions(t *testing.T) {
	for _, backend := range securityBackends {
		t.Run(backend, func(t *testing.T) {
			needAttacker(t)
			needBackend(t, backend)
			dir := publicDir(t)
			secret := filepath.Join(dir, "secret.log")
			recs := [][]byte{[]byte(secretMarker + " 0"), []byte(secretMarker + " 1")}
			recfile.WriteLog(t, secret, recs)
			if err := os.Chmod(secret, 0o600); err != nil {
				t.Fatal(err)
			}
			m1 := newPublicMountDir(t, dir)
			startMount(t, secret, m1, "--allow-other", "--no-cache", "--backend", backend)
			if opts := superOptions(t, m1); !strings.Contains(opts, "default_permissions") || !strings.Contains(opts, "allow_other") {
				t.Errorf("--allow-other mount without default_permissions: %q", opts)
			}
			r := asAttacker(t, "cat", filepath.Join(m1, "000000"))
			if r.code == 0 || strings.Contains(r.stdout, secretMarker) || !strings.Contains(r.stderr, "Permission denied") {
				t.Errorf("attacker's cat of a record of a 0600 file: code %d, %.100q %.100q; want Permission denied", r.code, r.stdout, r.stderr)
			}
			if b, err := os.ReadFile(filepath.Join(m1, "000000")); err != nil || !bytes.Equal(b, recs[0]) {
				t.Errorf("root's read of the record: %q %v", b, err)
			}
			fi, err := os.Stat(filepath.Join(m1, "000001"))
			if err != nil || fi.Mode().Perm() != 0o400 {
				t.Errorf("record of a 0600 file: %v %v, want -r--------", fi.Mode(), err)
			}

			tree := filepath.Join(dir, "tree")
			priv := filepath.Join(tree, "private")
			if err := os.MkdirAll(priv, 0o755); err != nil {
				t.Fatal(err)
			}
			recfile.WriteLog(t, filepath.Join(priv, "p.log"), recs)
			if err := os.WriteFile(filepath.Join(priv, "note.txt"), []byte(secretMarker+" note\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			recfile.WriteLog(t, filepath.Join(tree, "own.log"), recs)
			for p, mode := range map[string]os.FileMode{tree: 0o755, priv: 0o700, filepath.Join(tree, "own.log"): 0o600} {
				if err := os.Chmod(p, mode); err != nil {
					t.Fatal(err)
				}
			}
			m2 := filepath.Join(dir, "mnt2")
			if err := os.Mkdir(m2, 0o755); err != nil {
				t.Fatal(err)
			}
			mountDirs.Store(m2, true)
			startMount(t, tree, m2, "--allow-other", "--no-cache", "--backend", backend)
			for _, args := range [][]string{
				{"ls", filepath.Join(m2, "private")},
				{"cat", filepath.Join(m2, "private", "note.txt")},
				{"cat", filepath.Join(m2, "private", "p.log", "000000")},
				{"cat", filepath.Join(m2, "own.log", "000000")},
				{"ls", filepath.Join(m2, "own.log")},
			} {
				r := asAttacker(t, args[0], args[1:]...)
				if r.code == 0 || strings.Contains(r.stdout, secretMarker) || !strings.Contains(r.stderr, "Permission denied") {
					t.Errorf("attacker's %q: code %d, %.100q %.100q; want Permission denied", args, r.code, r.stdout, r.stderr)
				}
			}
			if b, err := os.ReadFile(filepath.Join(m2, "private", "p.log", "000001")); err != nil || !bytes.Equal(b, recs[1]) {
				t.Errorf("root's read inside the 0700 directory: %q %v", b, err)
			}
			if b, err := os.ReadFile(filepath.Join(m2, "private", "note.txt")); err != nil || !bytes.Contains(b, []byte(secretMarker)) {
				t.Errorf("root's read of a plain file inside the 0700 directory: %q %v", b, err)
			}
			for p, want := range map[string]os.FileMode{"private": os.ModeDir | 0o500, "own.log": os.ModeDir | 0o500, ".": os.ModeDir | 0o555} {
				fi, err := os.Stat(filepath.Join(m2, p))
				if err != nil || fi.Mode() != want {
					t.Errorf("mode of %s: %v %v, want %v", p, fi.Mode(), err, want)
				}
			}
		})
	}
}

// superOptions returns the super block options of the mount at dir, as
// /proc/self/mountinfo lists them.
func superOptions(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && f[4] == dir {
			if i := strings.Index(line, " - "); i >= 0 {
				if g := strings.Fields(line[i+3:]); len(g) >= 3 {
					return g[2]
				}
			}
		}
	}
	t.Fatalf("no mount at %s", dir)
	return ""
}

// deletedFDs counts the descriptors of process pid open on deleted files.
func deletedFDs(t *testing.T, pid int) (n int, names []string) {
	t.Helper()
	fdDir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	ents, err := os.ReadDir(fdDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join(fdDir, e.Name()))
		if err == nil && strings.HasSuffix(target, " (deleted)") {
			n++
			names = append(names, target)
		}
	}
	return n, names
}

// waitDeletedFDs polls the descriptors of process pid open on deleted
// files until at most left remain or deadline passes, first dropping the
// kernel's dentry and inode caches at each look when drop is set (so that
// the kernel forgets nodes). It returns the last count and names.
func waitDeletedFDs(t *testing.T, pid, left int, deadline time.Time, drop bool) (int, []string) {
	t.Helper()
	for {
		if drop {
			_ = os.WriteFile("/proc/sys/vm/drop_caches", []byte("2"), 0o200)
		}
		n, names := deletedFDs(t, pid)
		if n <= left || time.Now().After(deadline) {
			return n, names
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestDeletedSourcesClosed: a tree mount closes a record file it opened
// once the file is deleted: when the kernel forgets its nodes (after
// drop_caches), or at the next look with --follow.
func TestDeletedSourcesClosed(t *testing.T) {
	for _, backend := range securityBackends {
		for _, follow := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/follow=%v", backend, follow), func(t *testing.T) {
				needAttacker(t)
				dir := publicDir(t)
				tree := filepath.Join(dir, "tree")
				if err := os.Mkdir(tree, 0o755); err != nil {
					t.Fatal(err)
				}
				const files = 6
				for i := 0; i < files; i++ {
					recfile.WriteLog(t, filepath.Join(tree, fmt.Sprintf("%06d.log", i)), genRecords(int64(i), 5, 40))
				}
				mnt := newPublicMountDir(t, dir)
				needBackend(t, backend)
				args := []string{"--allow-other", "--no-cache", "--backend", backend}
				if follow {
					args = append(args, "--follow", "--follow-interval", "50ms")
				}
				m := startMount(t, tree, mnt, args...)
				for i := 0; i < files; i++ {
					if _, err := os.ReadFile(filepath.Join(mnt, fmt.Sprintf("%06d.log", i), "000001")); err != nil {
						t.Fatal(err)
					}
				}
				// One file stays open through the mount while deleted: its
				// reads go on working.
				held, err := os.Open(filepath.Join(mnt, "000000.log", "000002"))
				if err != nil {
					t.Fatal(err)
				}
				defer held.Close()
				for i := 0; i < files; i++ {
					if err := os.Remove(filepath.Join(tree, fmt.Sprintf("%06d.log", i))); err != nil {
						t.Fatal(err)
					}
				}
				pid := m.cmd.Process.Pid
				deadline := time.Now().Add(5 * time.Second)
				n, names := waitDeletedFDs(t, pid, 1, deadline, !follow)
				if n > 1 {
					t.Fatalf("%d descriptors of deleted sources still open (1 is held open through the mount): %q", n, names)
				}
				b := make([]byte, 64)
				if _, err := held.ReadAt(b[:1], 0); err != nil {
					t.Errorf("read of a record open while its source was deleted: %v", err)
				}
				held.Close()
				n, names = waitDeletedFDs(t, pid, 0, time.Now().Add(5*time.Second), true)
				if n != 0 {
					t.Fatalf("%d descriptors of deleted sources still open after the last handle closed: %q", n, names)
				}
			})
		}
	}
}

// TestReplacedSourcesClosed: under --follow, a record file of a tree
// replaced by a rename (a new version written aside and moved over it) is
// served in its new version, and the old file is closed at once: the
// daemon keeps no descriptor of it, without waiting for the kernel to
// forget nodes or for a garbage collection.
func TestReplacedSourcesClosed(t *testing.T) {
	needFUSE(t)
	eachBackend(t, func(t *testing.T, backend string) {
		tree := t.TempDir()
		const files = 4
		for i := 0; i < files; i++ {
			recfile.WriteLog(t, filepath.Join(tree, fmt.Sprintf("%06d.log", i)), genRecords(int64(i), 5, 40))
		}
		mnt := newMountDir(t)
		m := startMount(t, tree, mnt, "--no-cache", "--backend", backend, "--follow", "--follow-interval", "20ms")
		for i := 0; i < files; i++ {
			if _, err := os.ReadFile(filepath.Join(mnt, fmt.Sprintf("%06d.log", i), "000001")); err != nil {
				t.Fatal(err)
			}
		}
		newRecs := make([][][]byte, files)
		for i := 0; i < files; i++ {
			name := filepath.Join(tree, fmt.Sprintf("%06d.log", i))
			newRecs[i] = genRecords(int64(100+i), 5, 40)
			recfile.WriteLog(t, name+".new", newRecs[i])
			if err := os.Rename(name+".new", name); err != nil {
				t.Fatal(err)
			}
		}
		pid := m.cmd.Process.Pid
		deadline := time.Now().Add(5 * time.Second)
		for i := 0; i < files; i++ {
			p := filepath.Join(mnt, fmt.Sprintf("%06d.log", i), "000001")
			waitFor(t, time.Until(deadline), 20*time.Millisecond, func() (bool, string) {
				b, err := os.ReadFile(p)
				return err == nil && bytes.Equal(b, newRecs[i][1]), fmt.Sprintf("%s still not the new version: %q %v", p, b, err)
			})
		}
		n, names := waitDeletedFDs(t, pid, 0, deadline, false)
		if n != 0 {
			t.Fatalf("%d descriptors of replaced sources still open: %q", n, names)
		}
	})
}

// TestRenamedSourceStaysReadable: a record file renamed in the tree (a
// write-ahead log recycled under a new name) is not deleted: under
// --follow it stays open and followed, and readable under its new name
// too. That following ran after the rename is proven, not slept for: a
// record appended after the rename must appear in the record directory
// held open from before it, which only a follow tick of the renamed file
// can put there.
func TestRenamedSourceStaysReadable(t *testing.T) {
	needFUSE(t)
	eachBackend(t, func(t *testing.T, backend string) {
		tree := t.TempDir()
		recs := genRecords(5, 4, 40)
		recfile.WriteLog(t, filepath.Join(tree, "000005.log"), recs)
		mnt := newMountDir(t)
		startMount(t, tree, mnt, "--no-cache", "--backend", backend, "--follow", "--follow-interval", "20ms")
		if b, err := os.ReadFile(filepath.Join(mnt, "000005.log", "000001")); err != nil || !bytes.Equal(b, recs[1]) {
			t.Fatalf("before the rename: %q %v", b, err)
		}
		held, err := os.Open(filepath.Join(mnt, "000005.log"))
		if err != nil {
			t.Fatal(err)
		}
		defer held.Close()
		renamed := filepath.Join(tree, "000009.log")
		if err := os.Rename(filepath.Join(tree, "000005.log"), renamed); err != nil {
			t.Fatal(err)
		}
		more := genRecords(6, 1, 40)[0]
		recfile.AppendLog(t, renamed, more)
		recs = append(recs, more)
		waitFor(t, 30*time.Second, 20*time.Millisecond, func() (bool, string) {
			fd, err := syscall.Openat(int(held.Fd()), "000004", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
			if err != nil {
				return false, fmt.Sprintf("the record appended after the rename, in the directory held from before it: %v", err)
			}
			f := os.NewFile(uintptr(fd), "000004")
			defer f.Close()
			b, err := io.ReadAll(f)
			return err == nil && bytes.Equal(b, more), fmt.Sprintf("the appended record reads %q, %v", b, err)
		})
		for _, rec := range []string{"000002", "000003", "000004"} {
			i, _ := strconv.Atoi(rec)
			if b, err := os.ReadFile(filepath.Join(mnt, "000009.log", rec)); err != nil || !bytes.Equal(b, recs[i]) {
				t.Errorf("record %s under the new name: %q %v", rec, b, err)
			}
		}
	})
}
