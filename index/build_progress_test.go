package index

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/recfs/recfs/codec/leveldb"
)

// TestProgressRestartsOnSequentialRescan builds leveldb logs whose
// parallel scan gives up (chunks whose meaning depends on what came
// before them) and is followed by a sequential rescan of the whole file.
// The progress the build reports through Options.Progress must count
// that rescan from the start of the file: it never goes past the total,
// it reaches the total only once, in the build's last report, and that
// last report is exactly the total. A count the rescan did not restart
// would already stand at the total when the rescan begins, so every
// report of the rescan would say "done" while the rescan still runs.
func TestProgressRestartsOnSequentialRescan(t *testing.T) {
	old := minPartBytes
	defer func() { minPartBytes = old }()
	minPartBytes = 32768
	for _, c := range []struct {
		name string
		wo   leveldb.WriterOptions
	}{
		{"recyclable", leveldb.WriterOptions{Recyclable: true, LogNum: 7}},
		{"wal-sync", leveldb.WriterOptions{WALSync: true, LogNum: 7}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// 30000 short records: several parts, each scanning more
			// than 4096 records (a part reports every 4096), and a
			// rescan that reports about 7 times before it ends.
			var buf bytes.Buffer
			w := leveldb.NewWriter(&buf, c.wo)
			const n = 30000
			for i := range n {
				if _, err := w.WriteRecord(fmt.Appendf(nil, "record %06d %040d", i, i)); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			data := buf.Bytes()
			size := int64(len(data))
			if sp := buildSplit(size, Options{Parallel: 4}, logPartsPerWorker); sp.Parts < 2 {
				t.Fatalf("a %d-byte log is scanned in %d part(s): no parallel pass to fall back from", size, sp.Parts)
			}
			var (
				mu      sync.Mutex
				reports []int64
			)
			tb, err := Build(context.Background(), bytes.NewReader(data), size, Options{
				Parallel: 4,
				Progress: func(done, total int64) {
					mu.Lock()
					defer mu.Unlock()
					if total != size {
						t.Errorf("progress total %d, want the file's size %d", total, size)
					}
					reports = append(reports, done)
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if tb.Len() != n {
				t.Fatalf("%d records, want %d", tb.Len(), n)
			}
			if len(tb.Damage()) != 0 {
				t.Fatalf("damage %v in a clean log", tb.Damage())
			}
			mu.Lock()
			defer mu.Unlock()
			// Parallel pass: ~4 parts of ~7500 records, one report each;
			// rescan: 30000/4096 = 7 reports; then the final one.
			if len(reports) < 8 {
				t.Fatalf("%d progress reports, want the parallel pass's, the rescan's (7) and the final one: %v", len(reports), reports)
			}
			for i, d := range reports {
				if d < 0 || d > size {
					t.Fatalf("report %d: %d bytes done of %d: %v", i, d, size, reports)
				}
				if last := i == len(reports)-1; d == size && !last {
					t.Fatalf("report %d of %d already says all %d bytes are done, while the build still scans: %v", i, len(reports), size, reports)
				}
			}
			if got := reports[len(reports)-1]; got != size {
				t.Fatalf("last report %d, want the total %d: %v", got, size, reports)
			}
			// The rescan's reports climb from the start of the file: the
			// reports drop at least once (from the parallel pass's count
			// back to the rescan's).
			drops := 0
			for i := 1; i < len(reports); i++ {
				if reports[i] < reports[i-1] {
					drops++
				}
			}
			if drops == 0 {
				t.Fatalf("progress never restarted for the sequential rescan: %v", reports)
			}
		})
	}
}
