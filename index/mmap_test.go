package index

import (
	"context"
	"fmt"
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

// TestRecoverFaultKeepsOtherPanics: the fault guard turns only a memory
// fault into an error; a panic of any other kind (a bug in a scan) goes on
// panicking instead of passing for a changed source.
func TestRecoverFaultKeepsOtherPanics(t *testing.T) {
	t.Parallel()
	scan := func() (err error) {
		defer recoverFault(guardFault(), &err)
		var parts []int
		_ = parts[len(parts)] // index out of range
		return nil
	}
	defer func() {
		if r := recover(); r == nil {
			t.Error("an index-out-of-range panic under the fault guard did not panic")
		} else if !strings.Contains(fmt.Sprint(r), "index out of range") {
			t.Errorf("panic %v, want the original one", r)
		}
	}()
	err := scan()
	t.Errorf("scan returned %v, want its panic", err)
}
