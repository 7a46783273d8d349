package source_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/recfs/recfs/index/source"
)

// TestLocal: a Local reads the descriptor it was given, never the path
// (a file renamed over the path is not read); its identity names the path
// and the version, Stat sees a change through the descriptor; it maps and
// locks.
func TestLocal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("original bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	l, err := source.NewLocal(f, path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
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
	if now, _, err := l.Stat(); err != nil || now == id {
		t.Fatalf("stat after the file was unlinked: %+v %v, version did not move (ctime)", now, err)
	}
	id, _, _ = l.Stat()
	if _, err := l.WriteAt([]byte("O"), 0); err != nil {
		t.Fatal(err)
	}
	if now, _, err := l.Stat(); err != nil || now == id {
		t.Fatalf("stat after a write: %+v %v, version did not move", now, err)
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
	g, err := os.Open("/proc/self/fd/" + itoa(int(f.Fd())))
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
	if _, err := source.MapFile(g, 0); !errors.Is(err, source.ErrNoMap) {
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
