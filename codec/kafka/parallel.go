package kafka

import (
	"context"
	"io"
	"sync"

	"github.com/recfs/recfs/codec"
)

// PartScan is what ScanParallel asks of its caller for one part, the
// batches that start in [start, end) (see codec.PartScan).
type PartScan = codec.PartScan[*Scanner]

// ParallelResult is the outcome of ScanParallel: what one sequential scan
// of the whole file reports; its Info is the parts' facts merged in order
// (Info.Then).
type ParallelResult = codec.ParallelResult[Info]

// ScanParallel scans r (size bytes) in the parts of sp at once, calling
// scan for each part from one of sp's workers (see codec.Split), and
// returns what a sequential scan reports. Part i > 0 starts at the first
// batch at or after its share of the file that verifies (Options.Sync)
// and each part stops at the first batch at or after the next part's
// share (Options.End). The parts are accepted only if each starts exactly
// where the one before it stopped; otherwise (a part synced on bytes
// inside another batch that look like a batch, a Kafka segment stored as
// a record value) the file is scanned again sequentially as part 0, so
// correctness never rests on the resync rule. The bytes a part's Scanner
// hands out are valid until scan returns: its window buffer then goes to
// the next part a worker takes. Decompression and checksums of batches in
// different parts run at once: that is the point. sp.Parts < 2, or
// o.Strict, scans sequentially; o.Start, o.Sync and o.End are ignored.
func ScanParallel(ctx context.Context, r io.ReaderAt, size int64, o Options, sp codec.Split, scan PartScan) (ParallelResult, error) {
	o.Start, o.Sync, o.End, o.Prev = 0, false, 0, 0
	if o.Strict {
		sp.Parts = 1
	}
	// A part's window buffer goes to the next part a worker takes, so
	// that a build allocates (zeroes, faults in) one a worker, not one a
	// part.
	var mu sync.Mutex
	var free [][]byte
	open := func(start, end int64) *Scanner {
		po := o
		po.Start, po.Sync = start, start > 0
		if end < size {
			po.End = end // the last part runs to the end of the file
		}
		var buf []byte
		mu.Lock()
		if k := len(free); k > 0 {
			buf, free = free[k-1], free[:k-1]
		}
		mu.Unlock()
		return newScanner(r, size, po, buf)
	}
	scanPart := func(i int, start, end int64, sc *Scanner) error {
		err := scan(i, start, end, sc)
		// The part's records were taken: its window's bytes are read no
		// more (ScanHandover asks only for its Info, Damage and Err).
		if buf := sc.w.Buf(); buf != nil {
			sc.w = codec.Window{}
			mu.Lock()
			free = append(free, buf)
			mu.Unlock()
		}
		return err
	}
	parts, err := codec.ScanHandover(ctx, size, sp, open, scanPart, func(in Info) (int64, int64) { return in.First, in.Next })
	if err != nil {
		return ParallelResult{}, err
	}
	res := ParallelResult{Parts: len(parts), Info: parts[0].Info}
	for i, p := range parts {
		res.Damage = append(res.Damage, p.Damage...)
		if i > 0 {
			res.Info = res.Info.Then(p.Info)
		}
	}
	return res, nil
}
