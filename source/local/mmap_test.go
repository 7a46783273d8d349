package local

import (
	"bytes"
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
	path := filepath.Join(t.TempDir(), "f")
	want := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
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
