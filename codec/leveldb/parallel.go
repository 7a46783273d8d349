package leveldb

import (
	"context"
	"io"

	"github.com/recfs/recfs/codec"
)

// PartScan is what ScanParallel asks of its caller for one part, the
// records whose first chunk starts in [start, end) (see codec.PartScan; it
// may stop early).
type PartScan = codec.PartScan[*Scanner]

// ParallelResult is the outcome of ScanParallel: what one sequential scan
// of the whole log reports. Its Damage is stitched: joined across part
// edges, lead chunks no earlier part consumed reported as orphans, a stale
// tail settled; its Info is the flavour facts of the whole log.
type ParallelResult = codec.ParallelResult[Info]

// ScanParallel scans the log r (size bytes) in the parts of sp (cut at
// block boundaries) at once, calling scan for each part from one of sp's
// workers (see codec.Split), and returns the stitched result a sequential
// scan gives. When a part meets something whose meaning depends on what
// came before it (a recyclable or WAL-sync chunk, an end-of-log marker) or
// fails, the whole log is scanned again sequentially as part 0. It returns
// the scan's error, or ctx's if ctx ended. sp.Parts < 2, or o.Strict,
// scans sequentially; o.Start and o.End are ignored.
func ScanParallel(ctx context.Context, r io.ReaderAt, size int64, o Options, sp codec.Split, scan PartScan) (ParallelResult, error) {
	o.Start, o.End = 0, 0
	if o.Strict {
		sp.Parts = 1
	}
	ranges := splitParts(size, max(sp.Parts, 1))
	sp.Parts = len(ranges)
	parts, err := codec.RunParts(ctx, sp, func(i int) partResult {
		return scanPart(r, size, o, i, ranges[i], len(ranges) > 1, scan)
	})
	if err != nil {
		return ParallelResult{}, err
	}
	if len(parts) > 1 && needSequential(parts) {
		parts = []partResult{scanPart(r, size, o, 0, [2]int64{0, size}, false, scan)}
	}
	return stitch(parts)
}

// partResult is what one part's scan left for stitching.
type partResult struct {
	damage   []codec.Damage
	lead     func(consumedEnd int64) []codec.Damage // orphans among the part's lead chunks
	consumed int64
	info     Info
	err      error
}

// scanPart scans the records whose first chunk starts in [pr[0], pr[1]).
func scanPart(r io.ReaderAt, size int64, o Options, i int, pr [2]int64, split bool, scan PartScan) partResult {
	if split {
		o.Start, o.End = pr[0], pr[1]
	}
	sc := NewScanner(r, size, o)
	err := scan(i, pr[0], pr[1], sc)
	if err != nil {
		return partResult{err: err}
	}
	p := partResult{err: sc.Err(), damage: sc.Damage(), info: sc.Info()}
	if split {
		p.lead, p.consumed = sc.LeadDamage, sc.ConsumedEnd()
	}
	return p
}

// splitParts cuts [0, size) into p block-aligned ranges.
func splitParts(size int64, p int) [][2]int64 {
	step := (size/int64(p) + logBlockSize - 1) / logBlockSize * logBlockSize
	var out [][2]int64
	for start := int64(0); start < size || len(out) == 0; start += step {
		out = append(out, [2]int64{start, min(start+step, size)})
		if step == 0 {
			break
		}
	}
	return out
}

// needSequential reports whether a parallel scan met something whose
// meaning depends on what came before it in the file (recyclable log
// numbers, an end-of-log marker, a stop), so that only a sequential scan
// gives the exact answer.
func needSequential(parts []partResult) bool {
	for _, p := range parts {
		if p.err != nil || p.info.Recyclable || p.info.WALSync || p.info.EOFMarker >= 0 {
			return true
		}
	}
	return false
}

// stitch joins the parts' damage and flavour facts. A part's leading
// continuation chunks belong to a record that an earlier part finished past
// its end; those lying beyond what every earlier part consumed are orphans,
// exactly as a sequential scan reports.
func stitch(parts []partResult) (ParallelResult, error) {
	res := ParallelResult{Parts: len(parts), Info: Info{EOFMarker: -1}}
	var consumed int64
	for _, p := range parts {
		if p.err != nil {
			return ParallelResult{}, p.err
		}
		res.Damage = append(res.Damage, p.damage...)
		if p.lead != nil {
			res.Damage = append(res.Damage, p.lead(consumed)...)
		}
		consumed = max(consumed, p.consumed)
		mergeInfo(&res.Info, p.info)
	}
	// The scanner joins touching damage of one kind; do the same across
	// part edges so the result equals a sequential scan's.
	res.Damage = MergeDamage(res.Damage)
	return res, nil
}

// mergeInfo folds the flavour facts of one part into the whole log's.
func mergeInfo(dst *Info, src Info) {
	dst.Padded = dst.Padded || src.Padded
	if src.Recyclable && !dst.Recyclable && !dst.WALSync {
		dst.LogNum = src.LogNum
	}
	if src.WALSync && !dst.Recyclable && !dst.WALSync {
		dst.LogNum = src.LogNum
	}
	dst.Recyclable = dst.Recyclable || src.Recyclable
	dst.WALSync = dst.WALSync || src.WALSync
	if dst.EOFMarker < 0 && src.EOFMarker >= 0 {
		dst.EOFMarker = src.EOFMarker
	}
	dst.End = max(dst.End, src.End)
}

// Continue stitches the scan sc of a log from resume on (a split scan whose
// Start is the block start at or before resume, run to its end) onto prev,
// what an earlier scan of the log reported: prev's damage before resume is
// kept, sc's from resume on added with the orphans among its lead chunks,
// and the flavour facts folded together. sc must be finished.
func Continue(prev ParallelResult, resume int64, sc *Scanner) ParallelResult {
	var dmg []codec.Damage
	for _, d := range prev.Damage {
		if d.Off < resume {
			dmg = append(dmg, d)
		}
	}
	for _, d := range sc.Damage() {
		if d.Off >= resume {
			dmg = append(dmg, d)
		}
	}
	dmg = append(dmg, sc.LeadDamage(resume)...)
	info := prev.Info
	mergeInfo(&info, sc.Info())
	return ParallelResult{Parts: prev.Parts + 1, Damage: MergeDamage(dmg), Info: info}
}
