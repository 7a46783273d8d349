package index

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest/recfile"
)

// TestFollowReopenWhileAppending replaces a followed, writable source
// while other goroutines check and make appends, as a --rw --follow mount
// does: following switches the table to the new file while appends run.
// Under -race it shows whether the switch races the appenders' reads of
// the table's file.
func TestFollowReopenWhileAppending(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "src.log")
	recfile.WriteLog(t, path, hostileRecords(5, 'a'))
	tb, err := Open(context.Background(), path, Options{CacheDir: "-", Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	changes := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		tb.Follow(ctx, time.Millisecond, func(int64, int64) {
			select {
			case changes <- struct{}{}:
			default:
			}
		}, nil)
	}()
	stopFollow := func() { cancel(); <-followed }
	stop := untilStopped(2, func(_, _ int) bool {
		_ = tb.CheckAppend()
		_, _ = tb.Append(context.Background(), [][]byte{[]byte("x")}, AppendOptions{})
		_, _ = tb.Stat()
		return true
	})
	defer stop() // when the test fails before it stops them
	gen := tb.Generation()
	for i := range 5 {
		tmp := filepath.Join(dir, "next")
		recfile.WriteLog(t, tmp, hostileRecords(6+i, byte('b'+i)))
		before := tb.Generation()
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
		// Following reopens once the new file has settled: wait for the
		// change it reports, not for a guess at how long that takes.
		for tb.Generation() == before {
			select {
			case <-changes:
			case <-time.After(time.Minute):
				t.Fatalf("replacement %d: following did not switch to the new file", i)
			}
		}
	}
	stop()
	stopFollow()
	if tb.Generation() == gen {
		t.Fatal("following never switched to a replacing file")
	}
}
