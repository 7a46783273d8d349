package index

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
)

// deletedFDs counts this process's descriptors open on path after it was
// deleted or replaced (the link reads "path (deleted)").
func deletedFDs(t *testing.T, path string) int {
	t.Helper()
	return fdsWhere(t, func(l string) bool { return l == path+" (deleted)" })
}

// fdsWhere counts this process's descriptors whose /proc/self/fd link
// satisfies match.
func fdsWhere(t *testing.T, match func(link string) bool) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && match(l) {
			n++
		}
	}
	return n
}

// TestRefreshClosesReplacedSource replaces a source by a rename while
// readers read it, then refreshes the table: the table switches to the new
// file and closes the old one at once (not whenever the garbage collector
// runs, which an idle daemon may not do for minutes). Reads racing the
// switch return a record of one version whole or fail with ErrChanged.
func TestRefreshClosesReplacedSource(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // no finalizer closes it for us
	old := hostileRecords(30, 'a')
	same := sameSizeRecords(old, 'A')
	for _, format := range []string{"log", "rio", "rio-zstd"} {
		t.Run(format, func(t *testing.T) {
			tb, path := openTemp(t, encodeSource(t, format, old), Options{CacheDir: "-"})
			var (
				stop  atomic.Bool
				wg    sync.WaitGroup
				reads atomic.Int64
				bad   atomic.Value
			)
			for r := 0; r < 4; r++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; !stop.Load(); i++ {
						n := int64(i % len(old))
						got := make([]byte, len(old[n]))
						k, err := tb.ReadAt(n, got, 0)
						reads.Add(1)
						switch {
						case err == nil && (bytes.Equal(got[:k], old[n]) || bytes.Equal(got[:k], same[n])):
						case err != nil && errors.Is(err, ErrChanged):
						default:
							bad.Store(err)
							if err == nil {
								bad.Store(errors.New("bytes of no version: " + string(got[:min(k, 12)])))
							}
						}
					}
				}()
			}
			for _, n := range []int64{0, 7, 29} {
				readRecord(t, tb, n)
			}
			tmp := path + ".new"
			if err := os.WriteFile(tmp, encodeSource(t, format, same), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
			if _, err := tb.Refresh(context.Background()); err != nil {
				t.Fatal(err)
			}
			stop.Store(true)
			wg.Wait()
			if v := bad.Load(); v != nil {
				t.Fatalf("a read racing the replace: %v", v)
			}
			if got := deletedFDs(t, path); got != 0 {
				t.Errorf("%d descriptors still open on the replaced source after Refresh, want 0", got)
			}
			for n := range tb.Len() {
				if got := readRecord(t, tb, n); !bytes.Equal(got, same[n]) {
					t.Fatalf("record %d after refresh: %q..., want %q...", n, got[:min(len(got), 12)], same[n][:12])
				}
			}
			t.Logf("%d reads raced the replace", reads.Load())
		})
	}
}
