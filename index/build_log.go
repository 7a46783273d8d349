package index

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"

	"github.com/recfs/recfs/codec/leveldb"

	"github.com/recfs/recfs/codec"
)

// minPartBytes is the smallest part a parallel leveldb build hands to one
// goroutine; smaller files are scanned sequentially.
var minPartBytes int64 = 8 << 20

// blockSize is the leveldb log block size.
const blockSize = 32768

// logPart is the records of one part of a leveldb log.
type logPart struct {
	t     logTable // records whose first chunk starts in the part
	bytes int64
}

// partCount is how many parts a parallel scan of size bytes uses:
// Options.Parallel (GOMAXPROCS when unset), one when Strict or the file is
// small, and never parts smaller than minPartBytes.
func partCount(size int64, o Options) int {
	p := o.Parallel
	if p <= 0 {
		p = runtime.GOMAXPROCS(0)
	}
	if o.Strict || size < 2*minPartBytes {
		p = 1
	}
	return int(min(int64(p), max(1, size/minPartBytes)))
}

// buildLog indexes a leveldb log, in parallel parts when it is large enough
// (leveldb.ScanParallel stitches them).
func buildLog(ctx context.Context, r io.ReaderAt, size int64, o Options) (*snapshot, error) {
	p := partCount(size, o)
	var done atomic.Int64
	prog := progress{fn: o.Progress, total: size}
	parts := make([]*logPart, p)
	lo := leveldb.Options{Strict: o.Strict, Unmasked: o.Unmasked}
	res, err := leveldb.ScanParallel(ctx, r, size, lo, p, func(i int, start, end int64, sc *leveldb.Scanner) (err error) {
		if parts[i] != nil {
			done.Store(0) // the sequential rescan after a parallel one
		}
		defer recoverFault(guardFault(), &err)
		parts[i] = scanLogPart(ctx, sc, start, end, &done, prog)
		return nil
	})
	if err := canceled(ctx); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	s := mergeLogParts(parts[:res.Parts], res, o)
	prog.report(size)
	s.size = size
	return s, nil
}

// scanLogPart keeps the records sc yields, those whose first chunk starts
// in [start, end).
func scanLogPart(ctx context.Context, sc *leveldb.Scanner, start, end int64, done *atomic.Int64, prog progress) *logPart {
	part := &logPart{}
	part.t.side = map[int64]oddLog{}
	pp := partProgress{ctx: ctx, done: done, prog: prog, last: start}
	for sc.Next() {
		rec := sc.Record()
		part.t.add(rec)
		part.bytes += rec.Len
		if !pp.step(rec.Off) {
			break
		}
	}
	pp.finish(end)
	return part
}

// partProgress reports the progress of one part of a parallel scan: every
// 4096 records it adds the bytes scanned since its last report to the
// shared count, and it stops the scan once ctx is done.
type partProgress struct {
	ctx  context.Context
	done *atomic.Int64
	prog progress
	last int64 // offset up to which done counts this part
	n    int
}

// step counts one record starting at off; false means the scan is
// canceled.
func (p *partProgress) step(off int64) bool {
	p.n++
	if p.n&4095 != 0 {
		return true
	}
	if p.ctx.Err() != nil {
		return false
	}
	p.done.Add(off - p.last)
	p.last = off
	p.prog.report(p.done.Load())
	return true
}

// finish counts the rest of the part, up to end.
func (p *partProgress) finish(end int64) { p.done.Add(end - p.last) }

// add appends one record to the compact table.
func (t *logTable) add(rec leveldb.Record) {
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
	var chunks []leveldb.Chunk
	if rec.Chunks != nil {
		chunks = append([]leveldb.Chunk(nil), rec.Chunks...)
	}
	t.side[n] = oddLog{len: rec.Len, hdr: rec.Hdr, chunks: chunks}
}

// get returns record i of the table as a codec location.
func (t *logTable) get(i int64) leveldb.Record {
	if t.ln[i] != lenInSide {
		return leveldb.Record{Off: t.off[i], Len: int64(t.ln[i]), Hdr: t.hdr}
	}
	o := t.side[i]
	return leveldb.Record{Off: t.off[i], Len: o.len, Hdr: o.hdr, Chunks: o.chunks}
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

// mergeLogParts joins the parts' records, in part order, into one table
// with the stitched damage and flavour of res.
func mergeLogParts(parts []*logPart, res leveldb.ParallelResult, o Options) *snapshot {
	lt := &logTable{unmask: o.Unmasked}
	s := &snapshot{format: codec.LevelDB, tab: lt}
	// Size the merged arrays exactly: growth slack would cost up to a
	// quarter more memory per record for the table's whole life.
	var total int
	for _, p := range parts {
		total += len(p.t.off)
	}
	lt.off, lt.ln = make([]int64, 0, total), make([]uint32, 0, total)
	for _, p := range parts {
		lt.appendTable(&p.t)
		s.n += int64(len(p.t.off))
		s.bytes += p.bytes
	}
	s.damage = res.Damage
	lt.info = res.Info
	lt.resume = lt.lastEnd()
	s.flavor = logFlavor(lt.info)
	return s
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
		c, ok := leveldb.ChunkAt(rec, i)
		if !ok {
			break
		}
		end = c.Off + int64(rec.Hdr) + int64(c.Len)
	}
	return end
}

// logFlavor names the dialect of a leveldb log for people.
func logFlavor(in leveldb.Info) string {
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
