package local_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/recfs/recfs/source"
	"github.com/recfs/recfs/source/local"
)

// TestLocal: a Local reads the descriptor it was given, never the path
// (a file renamed over the path is not read); its identity names the path
// and the version; Stat looks at the path (and Reopen opens what is there),
// Fstat at the descriptor; it maps and locks.
func TestLocal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("original bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := openLocal(t, path)
	id := l.Identity()
	if id.Key != path || id.Version == "" {
		t.Fatalf("identity %+v", id)
	}
	if now, size, err := l.Stat(); err != nil || now != id || size != l.Size() {
		t.Fatalf("stat of an unchanged file: %+v %d %v", now, size, err)
	}
	// Replace the file at the path: the Local still reads its own.
	other := filepath.Join(dir, "g")
	if err := os.WriteFile(other, []byte("IMPOSTOR BYTES"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, l.Size())
	if _, err := l.ReadAt(b, 0); err != nil || string(b) != "original bytes" {
		t.Fatalf("read %q, %v", b, err)
	}
	// Stat looks at the path: it names the impostor now, and Reopen opens
	// it; the Local itself still reads its own file.
	if now, _, err := l.Stat(); err != nil || now == id {
		t.Fatalf("stat after the file was replaced: %+v %v, version did not move", now, err)
	}
	ro, err := l.Reopen(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer ro.(*local.File).Close()
	if ro.(*local.File).SameDescriptor(l) || readAll(t, ro) != "IMPOSTOR BYTES" {
		t.Fatalf("reopen after the file was replaced reads %q", readAll(t, ro))
	}
	before, err := l.Fstat()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.WriteAt([]byte("O"), 0); err != nil {
		t.Fatal(err)
	}
	if now, err := l.Fstat(); err != nil || now == before {
		t.Fatalf("fstat after a write: %+v %v, version did not move", now, err)
	}

	m, err := l.Map()
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.Slice(0, 8)
	if err != nil || string(s) != "Original" {
		t.Fatalf("slice %q %v", s, err)
	}
	if _, err := m.Slice(10, 100); err == nil {
		t.Fatal("slice past the end")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	unlock, err := l.Lock()
	if err != nil {
		t.Fatal(err)
	}
	g, err := os.Open("/proc/self/fd/" + itoa(int(l.OSFile().Fd())))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := syscall.Flock(int(g.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("second lock while held: %v, want EWOULDBLOCK", err)
	}
	unlock()
	if err := syscall.Flock(int(g.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	if _, err := local.MapFile(g, 0); !errors.Is(err, local.ErrNoMap) {
		t.Fatalf("map of 0 bytes: %v", err)
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// TestLocalFileStat: a Local's FileStat is the version its Size and
// Identity name, typed; Fstat sees the file now through the descriptor,
// without allocating; Now names the grown file's version under the same
// Key, reading the same descriptor.
func TestLocalFileStat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := openLocal(t, path)
	var _ source.FileStater = l
	st := l.FileStat()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	sys := fi.Sys().(*syscall.Stat_t)
	if st.Size != 10 || st.Size != l.Size() || st.Ino != sys.Ino || st.Dev != uint64(sys.Dev) ||
		st.Mtime != fi.ModTime().UnixNano() || st.Ctime != sys.Ctim.Nano() {
		t.Fatalf("FileStat %+v, stat %+v", st, sys)
	}
	if l.Identity().Version != st.Version() {
		t.Fatalf("identity version %q, FileStat renders %q", l.Identity().Version, st.Version())
	}
	if now, err := l.Fstat(); err != nil || now != st {
		t.Fatalf("Fstat of an unchanged file: %+v %v, want %+v", now, err, st)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = l.Fstat() }); n != 0 {
		t.Fatalf("Fstat allocates %v times", n)
	}

	if _, err := l.OSFile().WriteAt([]byte("abc"), 10); err != nil {
		t.Fatal(err)
	}
	now, err := l.Fstat()
	if err != nil || now.Size != 13 || now.Ino != st.Ino {
		t.Fatalf("Fstat after an append: %+v %v", now, err)
	}
	if l.FileStat() != st || l.Size() != 10 {
		t.Fatalf("the Local's version moved: %+v", l.FileStat())
	}
	g, err := l.Now()
	if err != nil {
		t.Fatal(err)
	}
	if g.Size() != 13 || g.FileStat() != now || g.Identity().Key != l.Identity().Key || g.Identity().Version == l.Identity().Version {
		t.Fatalf("Now: size %d, %+v, identity %+v (was %+v)", g.Size(), g.FileStat(), g.Identity(), l.Identity())
	}
	b := make([]byte, 13)
	if _, err := g.ReadAt(b, 0); err != nil || string(b) != "0123456789abc" {
		t.Fatalf("read %q %v", b, err)
	}
}

// openLocal opens path read-write as a local.File, closed at the test's end.
func openLocal(t *testing.T, path string) *local.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	l, err := local.New(f, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// readAll reads the whole version src names.
func readAll(t *testing.T, src source.Source) string {
	t.Helper()
	b := make([]byte, src.Size())
	if _, err := src.ReadAt(b, 0); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLocalReopen: Reopen of a file that only grew, or whose path names
// nothing now, is the same descriptor's version now; a closed File's Stat
// and Fstat fail with os.ErrClosed, and closing twice is closing once.
func TestLocalReopen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("0123"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := openLocal(t, path)
	if _, err := l.WriteAt([]byte("45"), 4); err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"grown", "removed"} {
		if step == "removed" {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}
		ro, err := l.Reopen(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if !ro.(*local.File).SameDescriptor(l) || ro.Size() != 6 || readAll(t, ro) != "012345" {
			t.Fatalf("%s: reopen is another descriptor, or %d bytes", step, ro.Size())
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if _, _, err := l.Stat(); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("stat of a closed File: %v", err)
	}
	if _, err := l.Fstat(); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("fstat of a closed File: %v", err)
	}
}
