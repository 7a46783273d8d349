package kafka

import (
	"context"
	"io"

	"github.com/recfs/recfs/codec"
)

// PartScan is what ScanParallel asks of its caller for one part, the
// batches that start in [start, end) (see codec.PartScan).
type PartScan = codec.PartScan[*Scanner]

// ParallelResult is the outcome of ScanParallel: what one sequential scan
// of the whole file reports.
type ParallelResult struct {
	// Parts is the number of parts whose records, taken in part order, are
	// the file's. It is 1 when ScanParallel fell back to a sequential
	// scan, which it reports as part 0 again (the caller's earlier part 0
	// is to be replaced).
	Parts int
	// Damage is every part's damage, in offset order.
	Damage []codec.Damage
	// Info is the facts of the parts, merged in order (Info.Then).
	Info Info
}

// ScanParallel scans r (size bytes) in n parts at once, calling scan for
// each part from its own goroutine, and returns what a sequential scan
// reports. Part i > 0 starts at the first batch at or after its share of
// the file that verifies (Options.Sync) and each part stops at the first
// batch at or after the next part's share (Options.End). The parts are
// accepted only if each starts exactly where the one before it stopped;
// otherwise (a part synced on bytes inside another batch that look like a
// batch, a Kafka segment stored as a record value) the file is scanned
// again sequentially as part 0, so correctness never rests on the resync
// rule. Decompression and checksums of batches in different parts run at
// once: that is the point. n < 2, or o.Strict, scans sequentially; o.Start,
// o.Sync and o.End are ignored.
func ScanParallel(ctx context.Context, r io.ReaderAt, size int64, o Options, n int, scan PartScan) (ParallelResult, error) {
	o.Start, o.Sync, o.End, o.Prev = 0, false, 0, 0
	if o.Strict || size <= 0 {
		n = 1
	}
	n = max(n, 1)
	type part struct {
		info   Info
		damage []codec.Damage
		err    error
	}
	run := func(i int, start, end int64) part {
		po := o
		po.Start, po.End, po.Sync = start, end, start > 0
		sc := NewScanner(r, size, po)
		if err := scan(i, start, end, sc); err != nil {
			return part{err: err}
		}
		return part{info: sc.Info(), damage: sc.Damage(), err: sc.Err()}
	}
	parts, err := codec.RunParts(ctx, n, func(i int) part {
		end := size * int64(i+1) / int64(n)
		if i == n-1 {
			end = 0
		}
		return run(i, size*int64(i)/int64(n), end)
	})
	if err != nil {
		return ParallelResult{}, err
	}
	if n > 1 && !handsOver(size, n, func(i int) (Info, error) { return parts[i].info, parts[i].err }) {
		parts = []part{run(0, 0, 0)}
	}
	res := ParallelResult{Parts: len(parts)}
	for i, p := range parts {
		if p.err != nil {
			return ParallelResult{}, p.err
		}
		res.Damage = append(res.Damage, p.damage...)
		if i == 0 {
			res.Info = p.info
		} else {
			res.Info = res.Info.Then(p.info)
		}
	}
	return res, nil
}

// handsOver reports whether every part starts exactly where the part
// before it stopped (or, having found no batch, the part before it ran to
// the end of the file), and none failed.
func handsOver(size int64, n int, part func(int) (Info, error)) bool {
	var next int64
	for i := range n {
		in, err := part(i)
		if err != nil {
			return false
		}
		if i > 0 && (in.First != next && !(in.First < 0 && next == size)) {
			return false
		}
		next = in.Next
	}
	return true
}
