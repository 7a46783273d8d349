package index

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/recfs/recfs/codec/codectest/recfile"

	"github.com/recfs/recfs/codec/codectest"
)

// TestFollow appends from "another process" (the codec writer on its own
// descriptor) and waits for Follow to report every new record.
func TestFollow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.log")
	recfile.WriteLog(t, path, codectest.Records(2, 10, 'a'))
	tb, err := Open(context.Background(), path, Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var seen [][2]int64
	done := make(chan error, 1)
	go func() {
		done <- tb.Follow(ctx, 10*time.Millisecond, func(o, n int64) {
			mu.Lock()
			seen = append(seen, [2]int64{o, n})
			mu.Unlock()
		}, func(err error) { t.Error(err) })
	}()
	for i := range 5 {
		recfile.AppendLog(t, path, codectest.Records(i+1, 100, 'z')...)
		deadline := time.Now().Add(5 * time.Second)
		want := int64(2 + (i+1)*(i+2)/2)
		for tb.Len() != want {
			if time.Now().After(deadline) {
				t.Fatalf("after append %d: %d records, want %d", i, tb.Len(), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Follow returned %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 || seen[0][0] != 2 || seen[len(seen)-1][1] != 17 {
		t.Fatalf("changes reported: %v", seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i][0] != seen[i-1][1] {
			t.Fatalf("changes not contiguous: %v", seen)
		}
	}
}
