package codec

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// PartScan is what a format's ScanParallel asks of its caller for one part
// of a file, the records that start in [start, end): drive sc, the
// format's scanner limited to that range (call Next until it returns
// false), and keep the records it yields for part number part. An error it
// returns, like the scanner's own, makes ScanParallel fall back to one
// sequential scan.
type PartScan[S any] func(part int, start, end int64, sc S) error

// Split is how a parallel scan divides a file: into Parts even parts,
// scanned by at most Workers goroutines at once, each taking the next part
// in file order once done with one. More parts than workers keep every
// worker busy to the end when one of them is slowed (its core taken by
// another process): the others take the parts it has not reached. Parts
// < 2 scans sequentially; Workers <= 0 runs one goroutine per part.
type Split struct {
	Parts   int
	Workers int
}

// workers returns how many goroutines sp runs: Workers, at most one a
// part.
func (sp Split) workers() int {
	if sp.Workers <= 0 || sp.Workers > sp.Parts {
		return sp.Parts
	}
	return sp.Workers
}

// RunParts calls scan for parts 0..sp.Parts-1 from sp.Workers goroutines,
// each taking the next part not yet taken, and returns their results in
// part order once all have returned, or ctx's error if ctx ended
// meanwhile (the workers then take no further part).
func RunParts[T any](ctx context.Context, sp Split, scan func(part int) T) ([]T, error) {
	n := max(sp.Parts, 0)
	out := make([]T, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range sp.workers() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				out[i] = scan(i)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// ParallelResult is the outcome of a format's ScanParallel: what one
// sequential scan of the whole file reports.
type ParallelResult[I any] struct {
	// Parts is the number of parts whose records, taken in part order, are
	// the file's records. It is 1 when ScanParallel fell back to a
	// sequential scan, which it reports as part 0 again (the caller's
	// earlier part 0 is to be replaced).
	Parts int
	// Damage is every part's damage, in offset order.
	Damage []Damage
	// Info is the facts of the parts, merged in part order.
	Info I
}

// PartScanner is what ScanHandover asks of a format's scanner once a
// part's scan has ended: its facts, its damage and its error.
type PartScanner[I any] interface {
	Info() I
	Damage() []Damage
	Err() error
}

// Part is one part's outcome in ScanHandover.
type Part[I any] struct {
	Info   I
	Damage []Damage
}

// errPartSkipped is the outcome of a part ScanHandover did not scan
// because one before it failed; it is never returned.
var errPartSkipped = errors.New("codec: part skipped after a failed part")

// ScanHandover scans a file of size bytes in sp's even parts at once for a
// format whose part scans hand over: open returns the scanner of the
// records that start in [start, end) (part i > 0 resyncing on its first
// record at or after start), scan drives it (see PartScan), and span
// reads from a finished part's facts where its first record starts (< 0:
// it found none) and where the record after its last one starts. The
// parts are accepted only if each starts exactly where the one before it
// handed over (or, finding no record, the one before it ran to the end of
// the file) and none failed (once one has, the parts not yet started are
// skipped); otherwise the file is scanned again as one
// part, open(0, size), so correctness never rests on the resync rule. It
// returns the parts in order, or the first error of the accepted parts,
// or ctx's error if ctx ended. sp.Parts < 2 or size <= 0 scans
// sequentially.
func ScanHandover[S PartScanner[I], I any](ctx context.Context, size int64, sp Split, open func(start, end int64) S, scan PartScan[S], span func(I) (first, next int64)) ([]Part[I], error) {
	n := max(sp.Parts, 1)
	if size <= 0 {
		n = 1
	}
	sp.Parts = n
	type outcome struct {
		Part[I]
		err error
	}
	run := func(i int, start, end int64) outcome {
		sc := open(start, end)
		if err := scan(i, start, end, sc); err != nil {
			return outcome{err: err}
		}
		return outcome{Part[I]{sc.Info(), sc.Damage()}, sc.Err()}
	}
	// Once a part has failed, the parts are thrown away for the rescan
	// below: the parts not yet started are skipped, not scanned.
	var failed atomic.Bool
	outs, err := RunParts(ctx, sp, func(i int) outcome {
		if failed.Load() {
			return outcome{err: errPartSkipped}
		}
		o := run(i, size*int64(i)/int64(n), size*int64(i+1)/int64(n))
		if o.err != nil {
			failed.Store(true)
		}
		return o
	})
	if err != nil {
		return nil, err
	}
	var next int64
	for i, o := range outs {
		first, nx := span(o.Info)
		if n > 1 && (o.err != nil || i > 0 && first != next && !(first < 0 && next == size)) {
			outs = []outcome{run(0, 0, size)}
			break
		}
		next = nx
	}
	parts := make([]Part[I], len(outs))
	for i, o := range outs {
		if o.err != nil {
			return nil, o.err
		}
		parts[i] = o.Part
	}
	return parts, nil
}
