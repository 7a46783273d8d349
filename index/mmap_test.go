package index

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec/codectest/recfile"

	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/source/local"
)

// TestMapShrunkSource: a source truncated while its map is scanned makes
// the scan fail with an error; the process does not die of SIGBUS.
func TestMapShrunkSource(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	recfile.WriteLog(t, path, codectest.Records(300, 2000, 'a'))
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	m, err := local.MapFile(f, fi.Size())
	if err != nil {
		t.Skip("mmap unavailable")
	}
	defer m.Close()
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	s, err := buildLog(context.Background(), m, fi.Size(), Options{})
	if err == nil || !strings.Contains(err.Error(), "changed while it was scanned") {
		t.Fatalf("scan of a shrunk map: %v records, error %v", s, err)
	}
}
