package index

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/recfs/recfs/codec"
)

// minPartBytes is the smallest part a parallel leveldb build hands to one
// goroutine; smaller files are scanned sequentially.
var minPartBytes int64 = 8 << 20

// blockSize is the leveldb log block size; parts start on block boundaries.
const blockSize = 32768

// logPart is the result of scanning one part of a leveldb log.
type logPart struct {
	start, end int64
	t          logTable // records whose first chunk starts in [start, end)
	bytes      int64
	damage     []codec.Damage
	leadDamage func(consumedEnd int64) []codec.Damage // orphans among the part's lead chunks
	consumed   int64
	info       codec.LogInfo
	err        error
}

// buildLog indexes a leveldb log, in parallel parts when it is large enough.
func buildLog(ctx context.Context, r io.ReaderAt, size int64, o Options) (*snapshot, error) {
	p := o.Parallel
	if p <= 0 {
		p = runtime.GOMAXPROCS(0)
	}
	if o.Strict || size < 2*minPartBytes {
		p = 1
	}
	p = int(min(int64(p), max(1, size/minPartBytes)))
	parts := splitParts(size, p)
	var done atomic.Int64
	prog := progress{fn: o.Progress, total: size}
	results := make([]*logPart, len(parts))
	var wg sync.WaitGroup
	for i, pr := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = scanLogPartGuarded(ctx, r, size, pr[0], pr[1], len(parts) > 1, o, &done, prog)
		}()
	}
	wg.Wait()
	if err := canceled(ctx); err != nil {
		return nil, err
	}
	if len(parts) > 1 && needSequential(results) {
		done.Store(0)
		results = []*logPart{scanLogPartGuarded(ctx, r, size, 0, size, false, o, &done, prog)}
	}
	s, err := mergeLogParts(results, o)
	if err != nil {
		return nil, err
	}
	prog.report(size)
	s.size = size
	return s, nil
}

// splitParts cuts [0, size) into p block-aligned ranges.
func splitParts(size int64, p int) [][2]int64 {
	step := (size/int64(p) + blockSize - 1) / blockSize * blockSize
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
func needSequential(parts []*logPart) bool {
	for _, p := range parts {
		if p.err != nil || p.info.Recyclable || p.info.WALSync || p.info.EOFMarker >= 0 {
			return true
		}
	}
	return false
}

// scanLogPartGuarded is scanLogPart with memory faults (a mapped source
// that shrank) turned into the part's error.
func scanLogPartGuarded(ctx context.Context, r io.ReaderAt, size, start, end int64, split bool,
	o Options, done *atomic.Int64, prog progress) (part *logPart) {
	var err error
	defer func() {
		if err != nil {
			part = &logPart{start: start, end: end, err: err}
		}
	}()
	defer recoverFault(guardFault(), &err)
	return scanLogPart(ctx, r, size, start, end, split, o, done, prog)
}

// scanLogPart scans the records whose first chunk starts in [start, end).
func scanLogPart(ctx context.Context, r io.ReaderAt, size, start, end int64, split bool,
	o Options, done *atomic.Int64, prog progress) *logPart {
	lo := codec.LogOptions{Strict: o.Strict, Unmasked: o.Unmasked}
	if split {
		lo.Start, lo.End = start, end
	}
	sc := codec.NewLogScanner(r, size, lo)
	part := &logPart{start: start, end: end}
	part.t.side = map[int64]oddLog{}
	var last int64 = start
	for i := 0; sc.Next(); i++ {
		rec := sc.Record()
		part.t.add(rec)
		part.bytes += rec.Len
		if i&4095 == 4095 {
			if ctx.Err() != nil {
				break
			}
			done.Add(rec.Off - last)
			last = rec.Off
			prog.report(done.Load())
		}
	}
	done.Add(end - last)
	part.err = sc.Err()
	part.damage = append(part.damage, sc.Damage()...)
	part.info = sc.Info()
	if split {
		part.leadDamage = sc.LeadDamage
		part.consumed = sc.ConsumedEnd()
	}
	return part
}

// add appends one record to the compact table.
func (t *logTable) add(rec codec.LogRecord) {
	n := int64(len(t.off))
	if n == 0 && len(t.side) == 0 && t.hdr == 0 {
		t.hdr = rec.Hdr
	}
	t.off = append(t.off, rec.Off)
	if rec.Chunks == nil && rec.Hdr == t.hdr && rec.Len < lenInSide {
		t.ln = append(t.ln, uint32(rec.Len))
		return
	}
	t.ln = append(t.ln, lenInSide)
	if t.side == nil {
		t.side = map[int64]oddLog{}
	}
	var chunks []codec.LogChunk
	if rec.Chunks != nil {
		chunks = append([]codec.LogChunk(nil), rec.Chunks...)
	}
	t.side[n] = oddLog{len: rec.Len, hdr: rec.Hdr, chunks: chunks}
}

// get returns record i of the table as a codec location.
func (t *logTable) get(i int64) codec.LogRecord {
	if t.ln[i] != lenInSide {
		return codec.LogRecord{Off: t.off[i], Len: int64(t.ln[i]), Hdr: t.hdr}
	}
	o := t.side[i]
	return codec.LogRecord{Off: t.off[i], Len: o.len, Hdr: o.hdr, Chunks: o.chunks}
}

// appendTable appends every record of u to t.
func (t *logTable) appendTable(u *logTable) {
	if u.hdr == t.hdr || len(t.off) == 0 && len(t.side) == 0 || len(u.off) == 0 {
		if len(t.off) == 0 && u.hdr != 0 {
			t.hdr = u.hdr
		}
		base := int64(len(t.off))
		t.off = append(t.off, u.off...)
		t.ln = append(t.ln, u.ln...)
		for k, v := range u.side {
			if t.side == nil {
				t.side = map[int64]oddLog{}
			}
			t.side[base+k] = v
		}
		return
	}
	for i := range int64(len(u.off)) {
		t.add(u.get(i))
	}
}

// mergeLogParts stitches part results into one table. Records are taken in
// part order. A part's leading continuation chunks belong to a record that
// an earlier part finished past its end; those lying beyond what every
// earlier part consumed are orphans, exactly as a sequential scan reports.
func mergeLogParts(parts []*logPart, o Options) (*snapshot, error) {
	s := &snapshot{format: codec.LevelDB}
	s.log.unmask = o.Unmasked
	s.log.info.EOFMarker = -1
	// Size the merged arrays exactly: growth slack would cost up to a
	// quarter more memory per record for the table's whole life.
	var total int
	for _, p := range parts {
		total += len(p.t.off)
	}
	s.log.off, s.log.ln = make([]int64, 0, total), make([]uint32, 0, total)
	var consumed int64
	for _, p := range parts {
		if p.err != nil {
			return nil, p.err
		}
		s.log.appendTable(&p.t)
		s.n += int64(len(p.t.off))
		s.bytes += p.bytes
		s.damage = append(s.damage, p.damage...)
		if p.leadDamage != nil {
			s.damage = append(s.damage, p.leadDamage(consumed)...)
		}
		consumed = max(consumed, p.consumed)
		mergeInfo(&s.log.info, p.info)
	}
	// The scanner joins touching damage of one kind; do the same across
	// part edges so the result equals a sequential scan's.
	s.damage = codec.MergeLogDamage(s.damage)
	s.log.resume = s.log.lastEnd()
	s.flavor = logFlavor(s.log.info)
	return s, nil
}

// lastEnd returns the offset just past the last chunk of the last record.
func (t *logTable) lastEnd() int64 {
	n := int64(len(t.off))
	if n == 0 {
		return 0
	}
	rec := t.get(n - 1)
	var end int64
	for i := 0; ; i++ {
		c, ok := codec.LogChunkAt(rec, i)
		if !ok {
			break
		}
		end = c.Off + int64(rec.Hdr) + int64(c.Len)
	}
	return end
}

// mergeInfo folds the flavour facts of one part into the table's.
func mergeInfo(dst *codec.LogInfo, src codec.LogInfo) {
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

// logFlavor names the dialect of a leveldb log for people.
func logFlavor(in codec.LogInfo) string {
	switch {
	case in.WALSync:
		return fmt.Sprintf("pebble WAL (WAL-sync chunks, log %d)", in.LogNum)
	case in.Recyclable:
		return fmt.Sprintf("RocksDB/pebble WAL (recyclable chunks, log %d)", in.LogNum)
	case in.Padded:
		return "leveldb log (zero-padded blocks, App Engine style)"
	}
	return "leveldb log"
}
