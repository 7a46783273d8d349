package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/recfs/recfs/codec"
)

// syncsDest is an append destination that counts the fsyncs asked of it,
// failing the one numbered failAt (from 1; 0 fails none) with EIO.
type syncsDest struct {
	appendDest
	syncs, failAt *atomic.Int64
}

func (d syncsDest) Sync() error {
	if n := d.syncs.Add(1); n == d.failAt.Load() {
		return syscall.EIO
	}
	return d.appendDest.Sync()
}

// TestAppendSyncsBehind: an append that will fsync fsyncs in the background
// while it writes (at least once when it writes over 2 writeBehind
// bytes), then once at the end; one that will not fsync makes none. A
// failed background fsync fails the append and leaves the file as it was.
func TestAppendSyncsBehind(t *testing.T) {
	ctx := context.Background()
	var syncs, failAt atomic.Int64
	wrapDest = func(d appendDest) appendDest { return syncsDest{d, &syncs, &failAt} }
	t.Cleanup(func() { wrapDest = nil })
	recs := make([][]byte, 40_000) // ~4 MiB
	for i := range recs {
		recs[i] = fmt.Appendf(nil, "%08d%090d", i, i)
	}
	for _, f := range []codec.Format{codec.LevelDB, codec.TFRecord} {
		t.Run(f.String(), func(t *testing.T) {
			tb, path := createTable(t, f, false)
			syncs.Store(0)
			if _, err := tb.Append(ctx, recs, AppendOptions{}); err != nil {
				t.Fatal(err)
			}
			if syncs.Load() != 0 {
				t.Fatalf("an append without sync made %d fsyncs", syncs.Load())
			}
			syncs.Store(0)
			if _, err := tb.Append(ctx, recs, AppendOptions{Sync: true}); err != nil {
				t.Fatal(err)
			}
			if n := syncs.Load(); n < 2 || n > 4*(1<<20)/writeBehind+1 {
				t.Fatalf("an append of ~4 MiB with sync made %d fsyncs, want 1 or more behind and 1 at the end", n)
			}
			t.Logf("an append of ~4 MiB with sync made %d fsyncs", syncs.Load())

			before, _ := os.ReadFile(path)
			n := tb.Len()
			syncs.Store(0)
			failAt.Store(1)
			defer failAt.Store(0)
			if _, err := tb.Append(ctx, recs, AppendOptions{Sync: true}); !errors.Is(err, syscall.EIO) {
				t.Fatalf("append whose background fsync failed: %v", err)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) || tb.Len() != n {
				t.Fatalf("failed append: file %d -> %d bytes, table %d -> %d records", len(before), len(after), n, tb.Len())
			}
		})
	}
}
