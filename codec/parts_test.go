package codec

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// TestRunParts: every part is scanned once, its result lands at its
// index, and no more than Workers parts are scanned at once (one
// goroutine a part when Workers is unset).
func TestRunParts(t *testing.T) {
	t.Parallel()
	for _, sp := range []Split{{Parts: 1}, {Parts: 3}, {Parts: 8, Workers: 2}, {Parts: 64, Workers: 3}, {Parts: 5, Workers: 9}, {Parts: 0, Workers: 2}} {
		t.Run(fmt.Sprintf("%d-%d", sp.Parts, sp.Workers), func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			seen := map[int]int{}
			var busy, most atomic.Int32
			out, err := RunParts(context.Background(), sp, func(i int) int {
				b := busy.Add(1)
				defer busy.Add(-1)
				for m := most.Load(); b > m && !most.CompareAndSwap(m, b); m = most.Load() {
				}
				mu.Lock()
				seen[i]++
				mu.Unlock()
				return i * 10
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != sp.Parts {
				t.Fatalf("%d results, want %d", len(out), sp.Parts)
			}
			for i, v := range out {
				if v != i*10 || seen[i] != 1 {
					t.Errorf("part %d: result %d, scanned %d times", i, v, seen[i])
				}
			}
			if w := sp.Workers; w > 0 && int(most.Load()) > w {
				t.Errorf("%d parts scanned at once, want at most %d", most.Load(), w)
			}
		})
	}
}

// TestRunPartsWorkersShare: with more parts than workers, a worker held
// up in its part leaves the other parts to the others: they are all
// scanned before the held one is let go.
func TestRunPartsWorkersShare(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var others atomic.Int32
	const parts = 10
	done := make(chan error, 1)
	go func() {
		_, err := RunParts(context.Background(), Split{Parts: parts, Workers: 2}, func(i int) int {
			if i == 0 {
				<-release
				return 0
			}
			if others.Add(1) == parts-1 {
				close(release)
			}
			return i
		})
		done <- err
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestRunPartsCanceled: once ctx ends, the workers take no further part
// and RunParts returns ctx's error.
func TestRunPartsCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var scanned atomic.Int32
	_, err := RunParts(ctx, Split{Parts: 100, Workers: 1}, func(i int) int {
		scanned.Add(1)
		if i == 4 {
			cancel()
		}
		return i
	})
	if err != context.Canceled {
		t.Fatalf("error %v, want %v", err, context.Canceled)
	}
	if n := scanned.Load(); n != 5 {
		t.Fatalf("%d parts scanned, want 5 (the worker stops taking parts once ctx ends)", n)
	}
}

// failingPart is a PartScanner of nothing for TestScanHandoverStopsAtFailure.
type failingPart struct{}

func (failingPart) Info() [2]int64   { return [2]int64{-1, -1} }
func (failingPart) Damage() []Damage { return nil }
func (failingPart) Err() error       { return nil }

// TestScanHandoverStopsAtFailure: once a part's scan fails, the parts not
// yet started are skipped rather than scanned and thrown away; the one
// sequential rescan follows and its error is the one returned. Parts
// scanned: at most one a worker (those under way when the first failed).
func TestScanHandoverStopsAtFailure(t *testing.T) {
	t.Parallel()
	const size = 1 << 20
	for _, sp := range []Split{{Parts: 8, Workers: 2}, {Parts: 64, Workers: 3}, {Parts: 4, Workers: 1}} {
		t.Run(fmt.Sprintf("%d-%d", sp.Parts, sp.Workers), func(t *testing.T) {
			t.Parallel()
			var parts, whole atomic.Int32
			errScan := fmt.Errorf("read failed")
			_, err := ScanHandover(context.Background(), size, sp,
				func(start, end int64) failingPart { return failingPart{} },
				func(_ int, start, end int64, _ failingPart) error {
					if start == 0 && end == size {
						whole.Add(1)
					} else {
						parts.Add(1)
					}
					return errScan
				},
				func(i [2]int64) (int64, int64) { return i[0], i[1] })
			if err != errScan {
				t.Fatalf("error %v, want the rescan's %v", err, errScan)
			}
			if p := parts.Load(); p < 1 || int(p) > sp.Workers {
				t.Errorf("%d parts scanned, want 1 to %d (one a worker at most)", p, sp.Workers)
			}
			if w := whole.Load(); w != 1 {
				t.Errorf("%d sequential rescans, want 1", w)
			}
		})
	}
}
