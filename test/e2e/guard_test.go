package e2e

// Appends that must not happen through a --rw mount: to a log its writer
// closed, and to the log of a database that is open right now.

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/syndtr/goleveldb/leveldb"
)

// TestWriteGuards: `echo x > MNT/new` fails and the source stays
// byte-identical, retries included, for a pebble WAL that pebble closed
// (EPERM; also at close(2) when pebble closes it during the write) and for
// an open goleveldb database's log (EBUSY, named in the
// mount's log); `recfs append` says why; --force lets the append through.
func TestWriteGuards(t *testing.T) {
	needFUSE(t)
	eachBackend(t, func(t *testing.T, backend string) {
		t.Run("closed pebble WAL", func(t *testing.T) { guardClosedWAL(t, backend) })
		t.Run("open goleveldb", func(t *testing.T) { guardOpenDB(t, backend) })
	})
}

// appendBytes appends b to the file at path.
func appendBytes(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// echoInto runs `echo x > path` in a shell and returns its result.
func echoInto(t *testing.T, path string) result {
	t.Helper()
	return runCmd(t, "sh", "-c", "echo x > "+path)
}

func guardClosedWAL(t *testing.T, backend string) {
	src := copyVector(t, "leveldb/pebble-recyclable.log")
	before, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	mnt := newMountDir(t)
	m := startMount(t, src, mnt, "--rw", "--no-cache", "--backend", backend)
	for try := 0; try < 3; try++ {
		if r := echoInto(t, filepath.Join(mnt, "new")); r.code == 0 || !strings.Contains(r.stderr, "Operation not permitted") {
			t.Fatalf("try %d: echo into a closed WAL: exit %d, %q; want EPERM", try, r.code, r.stderr)
		}
	}
	// A writer that checks close(2) sees the refusal too.
	if err := os.WriteFile(filepath.Join(mnt, "new2"), []byte("x"), 0o644); !errors.Is(err, syscall.EPERM) {
		t.Errorf("WriteFile into a closed WAL: %v, want EPERM", err)
	}
	unmountAndWait(t, m)
	if !strings.Contains(m.stderr.String(), "closed by its writer") {
		t.Errorf("the mount's log does not say why: %s", m.stderr)
	}
	if after, err := os.ReadFile(src); err != nil || !bytes.Equal(before, after) {
		t.Fatalf("closed WAL changed: %d -> %d bytes (%v)", len(before), len(after), err)
	}
	// pebble closes the log while a file is being written in the mount:
	// open(2) succeeded, close(2) fails, the source stays as pebble left it.
	marker := int64(106373) // pebble-recyclable.log: the end-of-log marker's offset
	if err := os.WriteFile(src, before[:marker], 0o644); err != nil {
		t.Fatal(err)
	}
	mnt2 := newMountDir(t)
	m2 := startMount(t, src, mnt2, "--rw", "--no-cache", "--backend", backend)
	f, err := os.Create(filepath.Join(mnt2, "late"))
	if err != nil {
		t.Fatalf("create while the WAL is open: %v", err)
	}
	if _, err := f.Write([]byte("late record")); err != nil {
		t.Fatal(err)
	}
	if err := appendBytes(src, before[marker:]); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); !errors.Is(err, syscall.EPERM) {
		t.Errorf("close after pebble closed the WAL: %v, want EPERM", err)
	}
	unmountAndWait(t, m2)
	if after, err := os.ReadFile(src); err != nil || !bytes.Equal(before, after) {
		t.Fatalf("WAL closed during a write changed: %d -> %d bytes (%v)", len(before), len(after), err)
	}
	r := runRecfs(t, "append", src, "/dev/null")
	if r.code == 0 || !strings.Contains(r.stderr, "closed by its writer") {
		t.Errorf("recfs append to a closed WAL: exit %d, %q", r.code, r.stderr)
	}
	if after, _ := os.ReadFile(src); !bytes.Equal(before, after) {
		t.Fatal("recfs append changed the closed WAL")
	}
}

func guardOpenDB(t *testing.T, backend string) {
	dir := t.TempDir()
	db, err := leveldb.OpenFile(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Put([]byte("k"), []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	src := onlyWAL(t, dir)
	before, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	mnt := newMountDir(t)
	m := startMount(t, src, mnt, "--rw", "--no-cache", "--backend", backend)
	for try := 0; try < 2; try++ {
		if r := echoInto(t, filepath.Join(mnt, "new")); r.code == 0 || !strings.Contains(r.stderr, "busy") {
			t.Fatalf("try %d: echo into an open database's log: exit %d, %q; want EBUSY", try, r.code, r.stderr)
		}
	}
	unmountAndWait(t, m)
	if lock := filepath.Join(dir, "LOCK"); !strings.Contains(m.stderr.String(), lock) {
		t.Errorf("the mount's log does not name %s: %s", lock, m.stderr)
	}
	if after, err := os.ReadFile(src); err != nil || !bytes.Equal(before, after) {
		t.Fatalf("the open database's log changed: %d -> %d bytes (%v)", len(before), len(after), err)
	}
	// --force: the user takes the responsibility.
	mnt2 := newMountDir(t)
	m2 := startMount(t, src, mnt2, "--rw", "--force", "--no-cache", "--backend", backend)
	sh(t, "echo forced > "+filepath.Join(mnt2, "new"))
	unmountAndWait(t, m2)
	if after, _ := os.ReadFile(src); len(after) <= len(before) {
		t.Error("--force appended nothing")
	}
}
