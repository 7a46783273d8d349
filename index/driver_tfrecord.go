package index

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"sync"
	"sync/atomic"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/tfrecord"
)

// tfrDriver is the driver of TFRecord files (codec/tfrecord): parallel
// builds with a checked hand-over between parts, incremental extension of
// grown files, appends with torn-tail repair as for leveldb logs. GZIP and
// ZLIB-compressed files are read (records are positions in the
// decompressed stream) but not appended to.
type tfrDriver struct{}

func (tfrDriver) extensions() []string { return []string{".tfrecord", ".tfrecords"} }

func (tfrDriver) probe(r io.ReaderAt, size int64, head []byte) (bool, error) {
	return tfrecord.Probe(r, size), nil
}

func (tfrDriver) build(ctx context.Context, r io.ReaderAt, size int64, f codec.Format, o Options) (*snapshot, error) {
	return buildTFR(ctx, r, size, o)
}

func (tfrDriver) decode(d *decoder, f codec.Format, n int64) table {
	t := &tfrTable{}
	d.tfr(t, n)
	return t
}

// tfrTable stores TFRecord locations: 12 bytes a record, plus a side map
// for records of 4 GiB or more.
type tfrTable struct {
	locs   recLocs         // offset of each record's length field, data length (lenInSide means "see side")
	side   map[int64]int64 // lengths that do not fit a length field
	resume int64           // end of the last intact record: where appends and extensions go on
	comp   tfrecord.Compression
	dsize  int64               // decompressed size (compressed files)
	seek   *tfrecord.SeekIndex // checkpoints into the stream (compressed files)
	saved  *cacheBlob          // the cache file its checkpoints' windows are read from, if loaded

	sealed bool // loaded from a table this user's recfs sealed (cache_vouch.go)
	passed bool // a proof's pass found this loaded table true throughout

	mu     sync.Mutex         // guards inf, and seek once the table is shared (a proof replaces it)
	inf    *tfrecord.Inflated // reader of a compressed source's stream
	infSrc io.ReaderAt        // the source inf reads
}

func (t *tfrTable) size(n int64) int64 {
	if l := t.locs.ln(n); l != lenInSide {
		return int64(l)
	}
	return t.side[n]
}

func (t *tfrTable) offset(n int64) int64 { return t.locs.off(n) }

func (t *tfrTable) get(n int64) tfrecord.Record {
	s, i := t.locs.seg(n)
	rec := tfrecord.Record{Off: s.off.at(i), Len: int64(s.ln.at(i))}
	if rec.Len == lenInSide {
		rec.Len = t.side[n]
	}
	return rec
}

func (t *tfrTable) add(rec tfrecord.Record) {
	n := t.locs.len()
	if rec.Len < lenInSide {
		t.locs.add(rec.Off, uint32(rec.Len))
		return
	}
	t.locs.add(rec.Off, lenInSide)
	if t.side == nil {
		t.side = map[int64]int64{}
	}
	t.side[n] = rec.Len
}

// readAt reads record n. A compressed source is read through its
// checkpoints (see inflated).
func (t *tfrTable) readAt(tb *Table, s *snapshot, n int64, p []byte, off int64) (int, error) {
	return t.readAtStopping(context.Background(), tb, s, n, p, off)
}

// readAtStopping is readAt whose decompression also stops when ctx is
// done.
func (t *tfrTable) readAtStopping(ctx context.Context, tb *Table, s *snapshot, n int64, p []byte, off int64) (int, error) {
	src := tb.src(s)
	if t.comp == tfrecord.None {
		return tfrecord.ReadRecord(src, t.get(n), p, off)
	}
	inf, err := t.inflated(src, s.size, tb.lifetime().Done())
	if err != nil {
		return 0, err
	}
	k, err := tfrecord.ReadRecord(inf.Stopping(ctx.Done()), t.get(n), p, off)
	switch {
	case errors.Is(err, tfrecord.ErrStopped) && ctx.Err() != nil:
		err = fmt.Errorf("%w (%w)", ctx.Err(), err) // the caller gave up: EINTR
	case errors.Is(err, os.ErrClosed) && tb.lifetime().Err() == nil:
		// The table is open: s was replaced (swapSnap closed its stored
		// windows), and the read goes on in the table that took its place.
		err = fmt.Errorf("%w (%w)", errSwapped, err)
	case errors.Is(err, tfrecord.ErrStopped) || errors.Is(err, os.ErrClosed):
		err = fmt.Errorf("%w (%w)", context.Canceled, err) // the table closed: EINTR, not EIO
	case errors.Is(err, tfrecord.ErrStoredWindow):
		err = fmt.Errorf("%w: %w", errLie, err) // the saved table's fault: scanned afresh
	}
	return k, err
}

func (t *tfrTable) samePrefix(old table, n int64) bool {
	o, ok := old.(*tfrTable)
	if !ok || o.comp != t.comp {
		return false
	}
	for i := range n {
		if o.get(i) != t.get(i) {
			return false
		}
	}
	return true
}

func (t *tfrTable) encode(e *encoder) { e.tfr(t) }

func (e *encoder) tfr(t *tfrTable) {
	e.u8(uint8(t.comp))
	e.i64(t.resume)
	e.i64(t.dsize)
	e.locs(&t.locs)
	e.u32(uint32(len(t.side)))
	for k, v := range t.side {
		e.i64(k)
		e.i64(v)
		e.spill()
	}
	if t.comp != tfrecord.None {
		e.seek(t.seek)
	}
}

func (d *decoder) tfr(t *tfrTable, n int64) {
	t.comp = tfrecord.Compression(d.u8())
	t.resume = d.i64()
	t.dsize = d.i64()
	if d.err != nil || uint64(n)*12 > uint64(d.remaining()) {
		d.err = errBadCache
		return
	}
	t.locs = d.locs(n)
	ns := d.count(16)
	t.side = make(map[int64]int64, ns)
	for range ns {
		k, v := d.i64(), d.i64()
		if k < 0 || k >= t.locs.len() || t.locs.ln(k) != lenInSide || v < lenInSide {
			d.err = errBadCache
			return
		}
		t.side[k] = v
	}
	if !sideComplete(&t.locs, func(k int64) bool { _, ok := t.side[k]; return ok }) {
		d.err = errBadCache
	}
	if t.comp != tfrecord.None {
		t.seek = d.seek(t.comp)
		t.seek.Size = t.dsize
		t.saved = d.blob
	}
}

// check verifies a decoded table: records in order, each inside the file
// (the decompressed stream) after the end of the previous one.
func (t *tfrTable) check(s *snapshot) error {
	if t.locs.len() != s.n {
		return fmt.Errorf("%d records, %d locations", s.n, t.locs.len())
	}
	limit := s.size
	switch t.comp {
	case tfrecord.None:
	case tfrecord.Gzip, tfrecord.Zlib:
		limit = t.dsize
		if err := t.checkSeek(s.size); err != nil {
			return err
		}
	default:
		return fmt.Errorf("compression %d", t.comp)
	}
	if t.resume < 0 || t.resume > limit {
		return fmt.Errorf("resume %d outside %d bytes", t.resume, limit)
	}
	var end, total int64
	for i := range s.n {
		rec := t.get(i)
		if rec.Off < end || rec.Len < 0 || rec.End() > limit || rec.End() < rec.Off {
			return fmt.Errorf("record %d at %d, %d bytes (previous ends at %d, file %d)", i, rec.Off, rec.Len, end, limit)
		}
		end = rec.End()
		total += rec.Len
	}
	if total != s.bytes {
		return fmt.Errorf("%d payload bytes, table says %d", total, s.bytes)
	}
	return nil
}

// goodEnd returns the end of the last intact record of a plain file (a
// compressed file's offsets are not file offsets: nothing is cut there).
func (t *tfrTable) goodEnd() (int64, bool) { return t.resume, t.comp == tfrecord.None }

// checkAppend refuses appends to compressed files before anything is
// written.
func (t *tfrTable) checkAppend(size int64) error {
	if t.comp != tfrecord.None {
		return fmt.Errorf("%w: appending to a %v-compressed TFRecord file", codec.ErrUnsupported, t.comp)
	}
	return nil
}

// tfrFlavor names the kind of TFRecord file for people.
func tfrFlavor(c tfrecord.Compression) string {
	if c == tfrecord.None {
		return "TFRecord"
	}
	return fmt.Sprintf("TFRecord (%v-compressed; record offsets are in the decompressed stream)", c)
}

// Bounds on the record table of a compressed TFRecord file, whose
// decompressed stream can be about a thousand times its size (a small
// file of millions of empty records): at most inflatedRecsPerByte records
// per compressed byte, beyond inflatedRecsFree. The table (12 bytes a
// record) then stays within a few dozen times the file's size, as a plain
// file's stays within its size.
const (
	inflatedRecsPerByte = 2
	inflatedRecsFree    = 1 << 20
)

// buildTFR indexes a TFRecord file: in parallel parts when it is plain and
// large enough (tfrecord.ScanParallel checks the hand-over between parts),
// in one pass of its decompressor when it is compressed.
func buildTFR(ctx context.Context, r io.ReaderAt, size int64, o Options) (s *snapshot, err error) {
	comp := tfrecord.None
	if size > 0 {
		if c, derr := tfrecord.Detect(r, size); derr == nil {
			comp = c
		}
	}
	tt := &tfrTable{comp: comp}
	s = &snapshot{format: codec.TFRecord, tab: tt, flavor: tfrFlavor(comp)}
	if comp != tfrecord.None {
		defer recoverFault(guardFault(), &err)
		return buildTFRCompressed(ctx, r, size, comp, o, s)
	}
	prog := progress{fn: o.Progress, total: size}
	to := tfrecord.Options{Strict: o.Strict}
	parts, res, err := scanParts(ctx, buildSplit(size, o, logPartsPerWorker),
		func(sp codec.Split, scan tfrecord.PartScan) (tfrecord.ParallelResult, error) {
			return tfrecord.ScanParallel(ctx, r, size, to, sp, scan)
		},
		func(sc *tfrecord.Scanner, start, end int64, done *atomic.Int64) (*tfrPart, error) {
			return scanTFRPart(ctx, r, sc, start, end, done, prog), nil
		})
	if err != nil {
		return nil, err
	}
	for _, pt := range parts[:res.Parts] {
		base := tt.locs.len()
		pt.locs.trim()
		tt.locs.join(&pt.locs)
		for k, v := range pt.side {
			if tt.side == nil {
				tt.side = map[int64]int64{}
			}
			tt.side[base+k] = v
		}
		s.bytes += pt.bytes
	}
	s.n = tt.locs.len()
	s.damage = res.Damage
	tt.resume = res.LastEnd
	s.size = size
	prog.report(size)
	return s, nil
}

// tfrPart is the records one part's scan found, and their payload bytes.
type tfrPart struct {
	tfrTable
	bytes int64
}

// scanTFRPart keeps the records sc (a scanner of r) yields.
func scanTFRPart(ctx context.Context, r io.ReaderAt, sc *tfrecord.Scanner, start, end int64, done *atomic.Int64, prog progress) *tfrPart {
	part := &tfrPart{}
	pp := newPartProgress(ctx, r, done, prog, start)
	for sc.Next() {
		rec := sc.Record()
		part.add(rec)
		part.bytes += rec.Len
		if !pp.step(rec.Off) {
			break
		}
	}
	pp.finish(end)
	return part
}

// canExtend: a grown file is taken in by scanning from the end of its last
// intact record (decompressing from the checkpoint before it).
func (t *tfrTable) canExtend() bool {
	if t.comp == tfrecord.None {
		return true
	}
	t.mu.Lock() // a proof may replace seek (proveCompressed)
	defer t.mu.Unlock()
	return t.seek != nil
}

// extend scans only what follows the last intact record of a grown file:
// records before it and damage before it are kept, everything from it on
// (a torn tail that was being written included) is scanned afresh.
func (ot *tfrTable) extend(ctx context.Context, t *Table, src io.ReaderAt, old *snapshot, size int64) (*snapshot, error) {
	if ot.comp != tfrecord.None {
		return ot.extendCompressed(ctx, t, src, old, size)
	}
	resume := ot.resume
	sc := tfrecord.NewScanner(src, size, tfrecord.Options{Strict: t.opt.Strict, Start: resume, Aligned: true})
	s := *old
	s.size = size
	tt := &tfrTable{comp: ot.comp, locs: ot.locs.grown(), side: ot.side, resume: ot.resume}
	s.tab = tt
	cloned := false
	for sc.Next() {
		rec := sc.Record()
		if rec.Len >= lenInSide && !cloned {
			tt.side, cloned = maps.Clone(ot.side), true
		}
		tt.add(rec)
		s.n++
		s.bytes += rec.Len
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := canceled(ctx); err != nil {
		return nil, err
	}
	var dmg []codec.Damage
	for _, d := range old.damage {
		if d.Off < resume {
			dmg = append(dmg, d)
		}
	}
	s.damage = append(dmg, sc.Damage()...)
	if s.n > old.n {
		tt.resume = sc.Info().LastEnd
	}
	s.source = "built"
	return &s, nil
}

// append writes recs (or streams) after the last intact record of a plain
// TFRecord file through f, whose lock the caller holds and which s
// describes. A torn tail is saved aside and cut off first (clearTail), as
// for leveldb logs. It returns what puts the file back.
func (tfrDriver) append(t *Table, f appendDest, s *snapshot, a appendReq) (undo, error) {
	tt := s.tab.(*tfrTable)
	if err := tt.checkAppend(s.size); err != nil {
		return undo{}, err // refused before anything is written
	}
	end, u, err := t.clearTail(f, s)
	if err != nil {
		return u, err
	}
	ow := newAppendWriter(f, end, a.o.Sync)
	defer ow.stopSyncing() // on failure, before the caller puts the file back
	w := tfrecord.NewWriter(ow, tfrecord.WriterOptions{Offset: end})
	var g growth = &counting{}
	if !a.o.CountOnly {
		g = tt.growing(end, a.many())
	}
	if err := a.writeAll(tracked(g, w.WriteRecord, w.WriteRecordFrom)); err != nil {
		return u, err
	}
	if err := w.Close(); err != nil {
		return u, err
	}
	a.written.set(g.done(w.Offset()))
	a.written.keep(ow.kept())
	if a.o.Sync {
		return u, ow.syncAll(f, t.path)
	}
	return u, nil
}

// create writes nothing: an empty file is an empty TFRecord file.
func (tfrDriver) create(w io.Writer, trailer bool) error { return nil }

// proveFrom scans a plain src from the end of record k-1 (the whole file
// for k == 0) and yields the records found; a compressed one is proven in
// one pass from its start (proveCompressed).
func (t *tfrTable) proveFrom(src io.ReaderAt, s *snapshot, k int64, o Options) (provingScan, int64, error) {
	if t.comp != tfrecord.None {
		return t.proveCompressed(src, s, o), 0, nil
	}
	to := tfrecord.Options{Strict: o.Strict}
	if k > 0 {
		to.Start, to.Aligned = t.get(k-1).End(), true
	}
	sc := tfrecord.NewScanner(src, s.size, to)
	return &scanProof[tfrecord.Record]{more: sc.Next, record: sc.Record, fail: sc.Err,
		same:   func(k int64, r tfrecord.Record) bool { return t.get(k) == r },
		offset: func(r tfrecord.Record) int64 { return r.Off }}, k, nil
}

// The capabilities of TFRecord files.
var (
	_ prover        = (*tfrTable)(nil)
	_ appender      = tfrDriver{}
	_ creator       = tfrDriver{}
	_ extender      = (*tfrTable)(nil)
	_ appendChecker = (*tfrTable)(nil)
)

// readsBySeek tells ReadAhead that a compressed file's records each resume
// the stream from a checkpoint.
func (t *tfrTable) readsBySeek() bool { return t.comp != tfrecord.None }
