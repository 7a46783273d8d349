package local

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// rssFileKB returns the process's resident file-backed memory.
func rssFileKB(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}

// TestMappingRelease: released pages of a mapping leave the process's
// resident memory, and their bytes read back unchanged.
func TestMappingRelease(t *testing.T) {
	const size = 64 << 20
	want := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	f := tempFile(t, want)
	m, err := MapFile(f, size)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	b, err := m.Slice(0, size)
	if err != nil || !bytes.Equal(b, want) {
		t.Fatalf("slice: %v", err)
	}
	// (The kernel may already have reclaimed some of the pages touched:
	// the mapping is advised sequential.)
	touched := rssFileKB(t)
	m.(*mapped).Release(0, size)
	released := rssFileKB(t)
	t.Logf("resident file pages: %d MB touched, %d MB released", touched>>10, released>>10)
	if touched < 8<<10 || released > touched/4 {
		t.Errorf("release left %d of %d KB resident", released, touched)
	}
	if b, err := m.Slice(size/2, 4096); err != nil || !bytes.Equal(b, want[size/2:size/2+4096]) {
		t.Fatalf("bytes after release: %v", err)
	}
}

// TestMappingUnmapped: the file's bytes read by pread are the mapped
// bytes, and end where the mapping does.
func TestMappingUnmapped(t *testing.T) {
	t.Parallel()
	want := []byte("0123456789abcdefghij")
	m, err := MapFile(tempFile(t, want), 16)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	u := m.(interface{ Unmapped() io.ReaderAt }).Unmapped()
	got := make([]byte, 20)
	n, err := u.ReadAt(got, 4)
	if n != 12 || err != io.EOF || !bytes.Equal(got[:n], want[4:16]) {
		t.Fatalf("ReadAt(20 bytes at 4) = %d %v %q, want 12 EOF %q", n, err, got[:n], want[4:16])
	}
}

// tempFile returns a file holding b, open for reading until the test ends.
func tempFile(t *testing.T, b []byte) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
