package codec

import (
	"context"
	"sync"
)

// PartScan is what a format's ScanParallel asks of its caller for one part
// of a file, the records that start in [start, end): drive sc, the
// format's scanner limited to that range (call Next until it returns
// false), and keep the records it yields for part number part. An error it
// returns, like the scanner's own, makes ScanParallel fall back to one
// sequential scan.
type PartScan[S any] func(part int, start, end int64, sc S) error

// RunParts calls scan for parts 0..n-1, each from its own goroutine, and
// returns their results in part order once all have returned, or ctx's
// error if ctx ended meanwhile.
func RunParts[T any](ctx context.Context, n int, scan func(part int) T) ([]T, error) {
	out := make([]T, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = scan(i)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
