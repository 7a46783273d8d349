package index

import (
	"bytes"
	"context"
	"errors"
	"os"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/recfs/recfs/codec"
)

// fullDest is an append destination whose writes past the end of the file
// fail with ENOSPC once left bytes have been written (the last one short),
// as a full disk does; overwriting bytes the file has takes no room.
type fullDest struct {
	appendDest
	left   *atomic.Int64
	writes *atomic.Int64
	locks  *atomic.Int64
}

func (d fullDest) WriteAt(p []byte, off int64) (int, error) {
	d.writes.Add(1)
	if st, err := d.Fstat(); err == nil && off+int64(len(p)) <= st.Size {
		return d.appendDest.WriteAt(p, off)
	}
	n := int(min(int64(len(p)), max(d.left.Add(-int64(len(p)))+int64(len(p)), 0)))
	if n < len(p) {
		m, _ := d.appendDest.WriteAt(p[:n], off)
		return m, syscall.ENOSPC
	}
	return d.appendDest.WriteAt(p, off)
}

func (d fullDest) Lock() (func(), error) {
	d.locks.Add(1)
	return d.appendDest.Lock()
}

// TestAppendThroughDest: appends write, lock and sync through the source's
// Writer and Locker (the destination a test wraps sees every write and the
// lock), and a write that fails partway (a full disk after 40,000 bytes)
// fails the append and leaves the file byte-identical, in every writable
// format, recordio with its trailer included; once the disk has room, the
// same append succeeds.
func TestAppendThroughDest(t *testing.T) {
	ctx := context.Background()
	var left, writes, locks atomic.Int64
	wrapDest = func(d appendDest) appendDest { return fullDest{d, &left, &writes, &locks} }
	t.Cleanup(func() { wrapDest = nil })
	for _, f := range []codec.Format{codec.LevelDB, codec.RecordIO, codec.TFRecord} {
		t.Run(f.String(), func(t *testing.T) {
			tb, path := createTable(t, f, f == codec.RecordIO)
			left.Store(1 << 30)
			if _, err := tb.Append(ctx, [][]byte{[]byte("one"), []byte("two")}, AppendOptions{}); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(path)
			recs := make([][]byte, 100)
			for i := range recs {
				recs[i] = bytes.Repeat([]byte{byte('a' + i%26)}, 1000)
			}
			writes.Store(0)
			locks.Store(0)
			left.Store(40000)
			_, err := tb.Append(ctx, recs, AppendOptions{Sync: true})
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("append to a full disk: %v", err)
			}
			if writes.Load() == 0 || locks.Load() != 1 {
				t.Fatalf("the destination saw %d writes and %d locks", writes.Load(), locks.Load())
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) || tb.Len() != 2 {
				t.Fatalf("failed append changed the file (%d -> %d bytes) or the table (%d records)", len(before), len(after), tb.Len())
			}
			left.Store(1 << 30)
			if first, err := tb.Append(ctx, recs, AppendOptions{Sync: true}); err != nil || first != 2 || tb.Len() != 102 {
				t.Fatalf("append with room: first %d, %d records, %v", first, tb.Len(), err)
			}
			if !bytes.Equal(readRecord(t, tb, 101), recs[99]) {
				t.Fatal("last record differs")
			}
		})
	}
}
