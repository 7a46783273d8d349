package tfrecord

import (
	"context"
	"io"

	"github.com/recfs/recfs/codec"
)

// PartScan is what ScanParallel asks of its caller for one part, the
// records that start in [start, end) (see codec.PartScan).
type PartScan = codec.PartScan[*Scanner]

// ParallelResult is the outcome of ScanParallel: what one sequential scan
// of the whole file reports.
type ParallelResult struct {
	// Parts is the number of parts whose records, taken in part order, are
	// the file's records. It is 1 when ScanParallel fell back to a
	// sequential scan, which it reports as part 0 again (the caller's
	// earlier part 0 is to be replaced).
	Parts int
	// Damage is every part's damage, in offset order.
	Damage []codec.Damage
	// LastEnd is the end of the last intact record (0 if none).
	LastEnd int64
	// Records is the number of records.
	Records int64
}

// ScanParallel scans r (size bytes) in the parts of sp at once, calling
// scan for each part from one of sp's workers (see codec.Split), and
// returns what a sequential scan reports. Part i > 0 starts at the first
// position its resync rule accepts (a valid length checksum, a length
// that fits, a data checksum that verifies), and each part follows its
// last record past its end to the offset where the next record starts.
// The parts are accepted only if each one starts exactly where the one
// before it hands over; otherwise — a part synced on something that
// looked like a record inside another record's data, such as a TFRecord
// file stored as a record — the file is scanned again sequentially as
// part 0. Correctness therefore never rests on the resync rule; its
// reliability (a random 12-byte window passes the length check with
// probability 2^-32, see TestSyncFalsePositiveRate) only makes the
// fallback rare. It returns the scan's error, or ctx's. sp.Parts < 2, or
// o.Strict, scans sequentially; o.Start, o.End and o.Aligned are ignored.
func ScanParallel(ctx context.Context, r io.ReaderAt, size int64, o Options, sp codec.Split, scan PartScan) (ParallelResult, error) {
	o.Start, o.End, o.Aligned = 0, 0, false
	if o.Strict {
		sp.Parts = 1
	}
	open := func(start, end int64) *Scanner {
		po := o
		po.Start, po.End = start, end
		return NewScanner(r, size, po)
	}
	parts, err := codec.ScanHandover(ctx, size, sp, open, scan, func(in Info) (int64, int64) { return in.First, in.Next })
	if err != nil {
		return ParallelResult{}, err
	}
	res := ParallelResult{Parts: len(parts)}
	for _, p := range parts {
		res.Damage = append(res.Damage, p.Damage...)
		res.Records += p.Info.Records
		if p.Info.Records > 0 {
			res.LastEnd = p.Info.LastEnd
		}
	}
	return res, nil
}

// Probe reports whether r holds a TFRecord file, plain or compressed (see
// Detect).
func Probe(r io.ReaderAt, size int64) bool {
	_, err := Detect(r, size)
	return err == nil
}
