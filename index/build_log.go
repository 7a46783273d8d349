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

// minPartBytes is the smallest part a parallel build hands to a worker;
// smaller files are scanned sequentially.
var minPartBytes int64 = 8 << 20

// blockSize is the leveldb log block size.
const blockSize = 32768

// logPart is the records of one part of a leveldb log.
type logPart struct {
	t     logTable // records whose first chunk starts in the part
	bytes int64
}

// buildSplit is how a parallel build of size bytes divides its work:
// Options.Parallel workers (GOMAXPROCS when unset), perWorker parts each,
// taken in turn (see codec.Split), never parts smaller than minPartBytes;
// one part when Strict, with one worker, or when the file is small.
func buildSplit(size int64, o Options, perWorker int) codec.Split {
	w := o.Parallel
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	if o.Strict || w < 2 || size < 2*minPartBytes {
		return codec.Split{Parts: 1, Workers: 1}
	}
	parts := min(int64(w)*int64(max(perWorker, 1)), size/minPartBytes)
	return codec.Split{Parts: int(parts), Workers: w}
}

// logPartsPerWorker is how many parts a parallel build of a leveldb log
// or a TFRecord file gives each worker.
const logPartsPerWorker = 1

// scanParts runs a format's parallel scan over the parts of sp and keeps
// what part makes of each part's scanner: scan is the format's
// ScanParallel with its file, size and options bound; part reads the
// records that start in [start, end) through sc and adds the bytes it
// scanned to done, the count progress reports. A part scanned again (the
// sequential rescan after a parallel scan the format gave up on) starts
// that count over. A memory fault in part (the mapped file shrank under
// it) is the part's error, as any error part returns, which ends the
// scan. It returns every part's outcome in part order (the first
// res.Parts of them are the file's) and the scan's result, or ctx's error
// once ctx ended, or the scan's error.
func scanParts[S, P, R any](ctx context.Context, sp codec.Split, scan func(codec.Split, codec.PartScan[S]) (R, error), part func(sc S, start, end int64, done *atomic.Int64) (P, error)) ([]P, R, error) {
	var done atomic.Int64
	parts := make([]P, sp.Parts)
	kept := make([]bool, sp.Parts)
	res, err := scan(sp, func(i int, start, end int64, sc S) (err error) {
		if kept[i] {
			done.Store(0) // the sequential rescan after a parallel one
		}
		defer recoverFault(guardFault(), &err)
		p, err := part(sc, start, end, &done)
		if err != nil {
			return err
		}
		parts[i], kept[i] = p, true
		return nil
	})
	if cerr := canceled(ctx); cerr != nil {
		err = cerr
	}
	if err != nil {
		var none R
		return nil, none, err
	}
	return parts, res, nil
}

// buildLog indexes a leveldb log, in parallel parts when it is large enough
// (leveldb.ScanParallel stitches them).
func buildLog(ctx context.Context, r io.ReaderAt, size int64, o Options) (*snapshot, error) {
	prog := progress{fn: o.Progress, total: size}
	lo := leveldb.Options{Strict: o.Strict, Unmasked: o.Unmasked, LogNum: o.LogNum}
	parts, res, err := scanParts(ctx, buildSplit(size, o, logPartsPerWorker),
		func(sp codec.Split, scan leveldb.PartScan) (leveldb.ParallelResult, error) {
			return leveldb.ScanParallel(ctx, r, size, lo, sp, scan)
		},
		func(sc *leveldb.Scanner, start, end int64, done *atomic.Int64) (*logPart, error) {
			return scanLogPart(ctx, r, sc, start, end, done, prog), nil
		})
	if err != nil {
		return nil, err
	}
	s := mergeLogParts(parts[:res.Parts], res, o)
	prog.report(size)
	s.size = size
	return s, nil
}

// scanLogPart keeps the records sc yields, those whose first chunk starts
// in [start, end) of r.
func scanLogPart(ctx context.Context, r io.ReaderAt, sc *leveldb.Scanner, start, end int64, done *atomic.Int64, prog progress) *logPart {
	part := &logPart{}
	part.t.side = map[int64]oddLog{}
	pp := newPartProgress(ctx, r, done, prog, start)
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
// shared count, lets go of the mapped pages the part has passed, and it
// stops the scan once ctx is done.
type partProgress struct {
	ctx  context.Context
	done *atomic.Int64
	prog progress
	last int64 // offset up to which done counts this part
	n    int
	rel  behind
}

func newPartProgress(ctx context.Context, r io.ReaderAt, done *atomic.Int64, prog progress, start int64) partProgress {
	return partProgress{ctx: ctx, done: done, prog: prog, last: start, rel: newBehind(r, start)}
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
	p.rel.passed(off)
	return true
}

// finish counts the rest of the part, up to end.
func (p *partProgress) finish(end int64) {
	p.done.Add(end - p.last)
	p.rel.finish(end)
}

// releaser is a mapped source whose pages a scan can let go of once it
// has passed them (source.Mapping from MapFile).
type releaser interface{ Release(off, n int64) }

// Pages a scan lets go of: those more than releaseLag behind it, in steps
// of releaseStep.
const (
	releaseLag  = 2 << 20
	releaseStep = 8 << 20
)

// behind lets go of the mapped pages of a source that one scan has
// passed, so that a scan keeps a few megabytes of a mapped file resident,
// not the whole file (the pages stay in the page cache).
type behind struct {
	r    releaser // nil when the source is not mapped
	done int64    // released up to here
}

func newBehind(r io.ReaderAt, start int64) behind {
	rel, _ := r.(releaser)
	return behind{r: rel, done: start}
}

// passed says the scan is at off: the pages more than releaseLag behind
// it go, a releaseStep at a time.
func (b *behind) passed(off int64) {
	if to := off - releaseLag; to-b.done >= releaseStep {
		b.release(to)
	}
}

// finish says the scan is done with everything before end.
func (b *behind) finish(end int64) { b.release(end) }

func (b *behind) release(to int64) {
	if b.r != nil && to > b.done {
		b.r.Release(b.done, to-b.done)
		b.done = to
	}
}

// add appends one record to the compact table.
func (t *logTable) add(rec leveldb.Record) {
	n := t.locs.len()
	if n == 0 && len(t.side) == 0 && t.hdr == 0 {
		t.hdr = rec.Hdr
	}
	if rec.Chunks == nil && rec.Hdr == t.hdr && rec.Len < lenInSide {
		t.locs.add(rec.Off, uint32(rec.Len))
		return
	}
	t.locs.add(rec.Off, lenInSide)
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
	s, j := t.locs.seg(i)
	off, ln := s.off.at(j), s.ln.at(j)
	if ln != lenInSide {
		return leveldb.Record{Off: off, Len: int64(ln), Hdr: t.hdr}
	}
	o := t.side[i]
	return leveldb.Record{Off: off, Len: o.len, Hdr: o.hdr, Chunks: o.chunks}
}

// appendTable appends every record of u to t (u's columns become t's:
// nothing is copied when both share a header size).
func (t *logTable) appendTable(u *logTable) {
	if u.hdr == t.hdr || t.locs.len() == 0 && len(t.side) == 0 || u.locs.len() == 0 {
		if t.locs.len() == 0 && u.hdr != 0 {
			t.hdr = u.hdr
		}
		base := t.locs.len()
		t.locs.join(&u.locs)
		for k, v := range u.side {
			if t.side == nil {
				t.side = map[int64]oddLog{}
			}
			t.side[base+k] = v
		}
		return
	}
	for i := range u.locs.len() {
		t.add(u.get(i))
	}
}

// mergeLogParts joins the parts' records, in part order, into one table
// with the stitched damage and flavour of res.
func mergeLogParts(parts []*logPart, res leveldb.ParallelResult, o Options) *snapshot {
	lt := &logTable{unmask: o.Unmasked}
	s := &snapshot{format: codec.LevelDB, tab: lt}
	for _, p := range parts {
		p.t.locs.trim()
		lt.appendTable(&p.t)
		s.n += p.t.locs.len()
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
	n := t.locs.len()
	if n == 0 {
		return 0
	}
	return t.endOf(n - 1)
}

// endOf returns the offset just past the last chunk of record k.
func (t *logTable) endOf(k int64) int64 {
	rec := t.get(k)
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

// logFlavor names the dialect of a leveldb log for people. A recyclable
// log that ends at offset 0 with no end marker had its number from the
// file's name, every chunk being of an older log (stale): the flavour says
// so, as a copy or a rename under a near number reads empty that way.
func logFlavor(in leveldb.Info) string {
	num := fmt.Sprintf("log %d", in.LogNum)
	if (in.WALSync || in.Recyclable) && in.End == 0 && in.EOFMarker < 0 {
		num += " by the file's name, every chunk an older log's: renamed or copied?"
	}
	switch {
	case in.WALSync:
		return fmt.Sprintf("pebble WAL (WAL-sync chunks, %s)", num)
	case in.Recyclable:
		return fmt.Sprintf("RocksDB/pebble WAL (recyclable chunks, %s)", num)
	case in.Padded:
		return "leveldb log (zero-padded blocks, App Engine style)"
	}
	return "leveldb log"
}
