package index

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/recfs/recfs/codec"
)

// TestAppendCountOnly: a CountOnly append (what recfs append asks for)
// writes the same bytes as an append that extends the table, returns the
// same first record and count, and leaves the table as it was, like
// another process's append: the next append catches up and numbers its
// records after the counted ones. Every writable format, records given
// and streamed.
func TestAppendCountOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	recs := [][]byte{[]byte("one"), {}, bytes.Repeat([]byte("b"), 70000)}
	lines := strings.Repeat("r\n", 5000) + "last"
	for _, c := range []struct {
		f       codec.Format
		trailer bool
	}{{codec.LevelDB, false}, {codec.TFRecord, false}, {codec.RecordIO, false}, {codec.RecordIO, true}} {
		t.Run(fmt.Sprintf("%v-trailer=%v", c.f, c.trailer), func(t *testing.T) {
			t.Parallel()
			counted, cpath := createTable(t, c.f, c.trailer)
			tracked, tpath := createTable(t, c.f, c.trailer)
			for _, tb := range []*Table{counted, tracked} {
				if _, err := tb.Append(ctx, [][]byte{[]byte("zero")}, AppendOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			// recordio appends rescan the file, which takes the records in;
			// the others leave the table as it was, and the next append
			// catches up with the records the last one wrote.
			want := func(n int64) int64 {
				if c.f == codec.RecordIO {
					return counted.Len()
				}
				return n
			}
			first, err := counted.Append(ctx, recs, AppendOptions{CountOnly: true, Sync: true})
			if err != nil || first != 1 || counted.Len() != want(1) {
				t.Fatalf("CountOnly Append: first %d, table %d records, %v", first, counted.Len(), err)
			}
			sfirst, n, err := counted.AppendStream(ctx, LineRecords(strings.NewReader(lines)), AppendOptions{CountOnly: true})
			if err != nil || sfirst != 4 || n != 5001 || counted.Len() != want(4) {
				t.Fatalf("CountOnly AppendStream: first %d, %d records, table %d, %v", sfirst, n, counted.Len(), err)
			}
			if _, err := tracked.Append(ctx, recs, AppendOptions{Sync: true}); err != nil {
				t.Fatal(err)
			}
			if _, _, err := tracked.AppendStream(ctx, LineRecords(strings.NewReader(lines)), AppendOptions{}); err != nil {
				t.Fatal(err)
			}
			cb, _ := os.ReadFile(cpath)
			tb, _ := os.ReadFile(tpath)
			if !bytes.Equal(cb, tb) {
				t.Fatalf("CountOnly appends wrote %d bytes, tracked ones %d (or other bytes)", len(cb), len(tb))
			}
			next, err := counted.Append(ctx, [][]byte{[]byte("after")}, AppendOptions{})
			if err != nil || next != 5005 || counted.Len() != 5006 || tracked.Len() != 5005 {
				t.Fatalf("append after CountOnly ones: first %d, %d records (tracked %d), %v", next, counted.Len(), tracked.Len(), err)
			}
			if got := readRecord(t, counted, 3); !bytes.Equal(got, recs[2]) {
				t.Fatalf("record 3 reads back %d bytes", len(got))
			}
		})
	}
}

// lateDest is an append destination whose first Sync first writes one
// more byte at the end of the file, as a writer that ignores the append
// lock would.
type lateDest struct {
	appendDest
	done *atomic.Bool
}

func (d lateDest) Sync() error {
	if !d.done.Swap(true) {
		st, err := d.Fstat()
		if err != nil {
			return err
		}
		if _, err := d.WriteAt([]byte{'!'}, st.Size); err != nil {
			return err
		}
	}
	return d.appendDest.Sync()
}

// TestAppendCountOnlyChecks: a CountOnly append still checks the file
// after writing: a byte someone else put after the new records fails it,
// and the file is put back as it was.
func TestAppendCountOnlyChecks(t *testing.T) {
	ctx := context.Background()
	var late atomic.Bool
	wrapDest = func(d appendDest) appendDest { return lateDest{d, &late} }
	t.Cleanup(func() { wrapDest = nil })
	for _, f := range []codec.Format{codec.LevelDB, codec.TFRecord} {
		t.Run(f.String(), func(t *testing.T) {
			late.Store(false)
			tb, path := createTable(t, f, false)
			before, _ := os.ReadFile(path)
			_, _, err := tb.AppendStream(ctx, LineRecords(strings.NewReader("a\nb\n")), AppendOptions{CountOnly: true, Sync: true})
			if err == nil || !strings.Contains(err.Error(), "the file ends at") {
				t.Fatalf("append with a byte written after it: %v", err)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) || tb.Len() != 0 {
				t.Fatalf("failed append left %d bytes (had %d), table %d records", len(after), len(before), tb.Len())
			}
		})
	}
}
