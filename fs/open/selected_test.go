package open

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/index"
	"github.com/recfs/recfs/index/report"
)

// TestSelected: a selection of fewer than SeqMinRecords records is read
// from the table opened is called with, a larger one from a fresh scan of
// the same records; opened is called once either way, also before a
// selection the file cannot satisfy, which is Select's error.
func TestSelected(t *testing.T) {
	t.Parallel()
	const n = SeqMinRecords + 100
	var log bytes.Buffer
	w := leveldb.NewWriter(&log, leveldb.WriterOptions{})
	for i := range n {
		if _, err := w.WriteRecord(fmt.Appendf(nil, "record %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "x.log")
	if err := os.WriteFile(p, log.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	o := Options{Index: index.Options{CacheDir: "-"}}
	for _, tc := range []struct {
		sel       []report.Range
		count     int64
		rescanned bool
	}{
		{[]report.Range{{Lo: 0, Hi: 10}}, 10, false},
		{[]report.Range{{Lo: 0, Hi: SeqMinRecords - 1}}, SeqMinRecords - 1, false},
		{[]report.Range{{Lo: 0, Hi: SeqMinRecords}}, SeqMinRecords, true},
		{[]report.Range{{Lo: 5, Hi: -1}}, n - 5, true},
		{[]report.Range{{Last: 3}}, 3, false},
	} {
		var first []*index.Table
		s, err := Selected(context.Background(), p, tc.sel, nil, o, func(t *index.Table) { first = append(first, t) })
		if err != nil {
			t.Fatalf("%v: %v", tc.sel, err)
		}
		if got := report.Count(s.Ranges); got != tc.count || s.Rescanned != tc.rescanned || len(first) != 1 ||
			(s.Table == first[0]) == tc.rescanned || s.Table.Len() != n {
			t.Errorf("%v: %d records, rescanned %v, opened called %d times, %d in the table; want %d, %v, once, %d",
				tc.sel, got, s.Rescanned, len(first), s.Table.Len(), tc.count, tc.rescanned, n)
		}
		if err := s.Close(); err != nil {
			t.Errorf("%v: Close: %v", tc.sel, err)
		}
	}
	// opened may be nil; a zero Selection closes without effect.
	s, err := Selected(context.Background(), p, []report.Range{{Lo: 0, Hi: 1}}, nil, o, nil)
	if err != nil || report.Count(s.Ranges) != 1 {
		t.Errorf("Selected without opened: %v, %v; want one record", s, err)
	} else if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := new(Selection).Close(); err != nil {
		t.Errorf("zero Selection's Close: %v", err)
	}
	calls := 0
	s, err = Selected(context.Background(), p, []report.Range{{Lo: n, Hi: n + 1}}, nil, o, func(*index.Table) { calls++ })
	if err == nil || s != nil || calls != 1 {
		t.Errorf("record %d of %d: %v, %v, opened called %d times; want an error, nothing, once", n, n, s, err, calls)
	}
}
