package index

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/recfs/recfs/codec"
)

// countDest is an append destination that counts the writes and syncs
// going through it.
type countDest struct {
	appendDest
	writes, syncs *atomic.Int64
}

func (d countDest) WriteAt(p []byte, off int64) (int, error) {
	d.writes.Add(1)
	return d.appendDest.WriteAt(p, off)
}

func (d countDest) Sync() error {
	d.syncs.Add(1)
	return d.appendDest.Sync()
}

// TestAppendGroupCostsOne: one Append of a group of small records (what a
// mount's group commit hands over for the closes that queued together)
// takes as many writes and syncs of the source as an Append of one record,
// in every writable format (recordio's trailer move happens once per
// group), and the records land in the order given.
func TestAppendGroupCostsOne(t *testing.T) {
	ctx := context.Background()
	var writes, syncs atomic.Int64
	wrapDest = func(d appendDest) appendDest { return countDest{d, &writes, &syncs} }
	t.Cleanup(func() { wrapDest = nil })
	for _, c := range []struct {
		f       codec.Format
		trailer bool
	}{{codec.LevelDB, false}, {codec.RecordIO, false}, {codec.RecordIO, true}, {codec.TFRecord, false}} {
		t.Run(fmt.Sprintf("%v/trailer=%v", c.f, c.trailer), func(t *testing.T) {
			tb, _ := createTable(t, c.f, c.trailer)
			cost := func(recs [][]byte) (int64, int64) {
				t.Helper()
				writes.Store(0)
				syncs.Store(0)
				if _, err := tb.Append(ctx, recs, AppendOptions{Sync: true}); err != nil {
					t.Fatal(err)
				}
				return writes.Load(), syncs.Load()
			}
			w1, s1 := cost([][]byte{[]byte("alone")})
			group := make([][]byte, 8)
			for i := range group {
				group[i] = fmt.Appendf(nil, "member %d of the group, 99 bytes or so: %080d", i, i)
			}
			w8, s8 := cost(group)
			t.Logf("one record: %d writes, %d syncs; a group of 8: %d writes, %d syncs", w1, s1, w8, s8)
			if w1 == 0 || s1 == 0 || w8 != w1 || s8 != s1 {
				t.Errorf("one record: %d writes, %d syncs; a group of 8: %d writes, %d syncs (want the same, non-zero)", w1, s1, w8, s8)
			}
			if tb.Len() != 9 {
				t.Fatalf("%d records, want 9", tb.Len())
			}
			for i, want := range group {
				if got := readRecord(t, tb, int64(1+i)); string(got) != string(want) {
					t.Errorf("record %d = %q, want %q", 1+i, got, want)
				}
			}
		})
	}
}
