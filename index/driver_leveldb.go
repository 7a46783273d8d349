package index

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/leveldb"
)

// logDriver is the driver of leveldb logs (codec/leveldb): parallel
// builds, incremental extension of grown logs, appends with torn-tail
// repair.
type logDriver struct{}

func (logDriver) probe(r io.ReaderAt, size int64, head []byte) (bool, error) {
	return leveldb.Probe(r, size), nil
}

func (logDriver) tried(head []byte) string {
	return fmt.Sprintf("leveldb log (no valid chunk at the first %d block starts)", leveldb.ProbeBlocks)
}

func (logDriver) build(ctx context.Context, r io.ReaderAt, size int64, f codec.Format, o Options) (*snapshot, error) {
	return buildLog(ctx, r, size, o)
}

func (logDriver) decode(d *decoder, f codec.Format, n int64) table {
	t := &logTable{}
	d.log(t, n)
	return t
}

// logTable stores leveldb record locations: 12 bytes a record, plus a side
// table for the few records that need more.
type logTable struct {
	locs   recLocs          // first chunk header of each record, payload length (lenInSide means "see side")
	hdr    uint8            // chunk header size shared by most records
	side   map[int64]oddLog // records that are not canonical, too long, or of another header size
	resume int64            // where an incremental scan continues (end of the last good data)
	info   leveldb.Info     // flavour facts from the scan
	unmask bool             // CRCs stored unmasked
}

// oddLog is a record that the compact arrays cannot describe alone.
type oddLog struct {
	len    int64
	hdr    uint8
	chunks []leveldb.Chunk
}

func (t *logTable) size(n int64) int64 {
	if l := t.locs.ln(n); l != lenInSide {
		return int64(l)
	}
	return t.side[n].len
}

func (t *logTable) offset(n int64) int64 { return t.locs.off(n) }

func (t *logTable) readAt(tb *Table, s *snapshot, n int64, p []byte, off int64) (int, error) {
	return leveldb.ReadRecord(tb.src(s), t.get(n), p, off, leveldb.Options{Unmasked: t.unmask})
}

func (t *logTable) samePrefix(old table, n int64) bool {
	o, ok := old.(*logTable)
	if !ok {
		return false
	}
	if t.hdr != o.hdr && n > 0 {
		return false
	}
	for i := range n {
		a, b := o.get(i), t.get(i)
		if a.Off != b.Off || a.Len != b.Len || a.Hdr != b.Hdr {
			return false
		}
	}
	return true
}

func (t *logTable) encode(e *encoder) { e.log(t) }

func (e *encoder) log(t *logTable) {
	e.u8(t.hdr)
	e.bool(t.unmask)
	e.i64(t.resume)
	e.bool(t.info.Padded)
	e.bool(t.info.Recyclable)
	e.bool(t.info.WALSync)
	e.u32(t.info.LogNum)
	e.i64(t.info.EOFMarker)
	e.i64(t.info.End)
	e.locs(&t.locs)
	e.u32(uint32(len(t.side)))
	for k, v := range t.side {
		e.i64(k)
		e.i64(v.len)
		e.u8(v.hdr)
		e.u32(uint32(len(v.chunks)))
		for _, c := range v.chunks {
			e.i64(c.Off)
			e.u32(uint32(c.Len))
		}
		e.spill()
	}
}

func (d *decoder) log(t *logTable, n int64) {
	t.hdr = d.u8()
	t.unmask = d.bool()
	t.resume = d.i64()
	t.info = leveldb.Info{Padded: d.bool(), Recyclable: d.bool(), WALSync: d.bool(), LogNum: d.u32(),
		EOFMarker: d.i64(), End: d.i64()}
	if d.err != nil || uint64(n)*12 > uint64(d.remaining()) {
		d.err = errBadCache
		return
	}
	t.locs = d.locs(n)
	ns := d.count(21)
	t.side = make(map[int64]oddLog, ns)
	for range ns {
		k := d.i64()
		o := oddLog{len: d.i64(), hdr: d.u8()}
		nc := d.count(12)
		for range nc {
			o.chunks = append(o.chunks, leveldb.Chunk{Off: d.i64(), Len: int32(d.u32())})
		}
		if k < 0 || k >= t.locs.len() || t.locs.ln(k) != lenInSide {
			d.err = errBadCache
			return
		}
		t.side[k] = o
	}
	if !sideComplete(&t.locs, func(k int64) bool { _, ok := t.side[k]; return ok }) {
		d.err = errBadCache
	}
}

// validHdr reports whether h is a leveldb chunk header size.
func validHdr(h uint8) bool { return h == 7 || h == 11 || h == 19 }

// checkLog checks a leveldb table: each record's chunks lie inside the file
// after the end of the previous record.
func (t *logTable) check(s *snapshot) error {
	if t.locs.len() != s.n {
		return fmt.Errorf("%d records, %d locations", s.n, t.locs.len())
	}
	if s.n > 0 && !validHdr(t.hdr) || t.resume < 0 || t.resume > s.size {
		return fmt.Errorf("header size %d, resume %d", t.hdr, t.resume)
	}
	var end, total int64 // end of the previous record, payload bytes
	for i := range s.n {
		rec := t.get(i)
		if rec.Off < end || !validHdr(rec.Hdr) || rec.Len < 0 {
			return fmt.Errorf("record %d at %d (previous ends at %d)", i, rec.Off, end)
		}
		var got int64
		for k := 0; ; k++ {
			c, ok := leveldb.ChunkAt(rec, k)
			if !ok {
				if k == 0 {
					return fmt.Errorf("record %d has no chunk", i)
				}
				break
			}
			if c.Off < end || c.Len < 0 || c.Off+int64(rec.Hdr)+int64(c.Len) > s.size {
				return fmt.Errorf("record %d chunk %d at %d outside the file", i, k, c.Off)
			}
			end = c.Off + int64(rec.Hdr) + int64(c.Len)
			got += int64(c.Len)
			if rec.Chunks == nil && got >= rec.Len {
				break
			}
		}
		if got != rec.Len {
			return fmt.Errorf("record %d: chunks hold %d of %d bytes", i, got, rec.Len)
		}
		total += rec.Len
	}
	if total != s.bytes {
		return fmt.Errorf("%d payload bytes, table says %d", total, s.bytes)
	}
	return nil
}

// checkAppend refuses, before anything is written, an append to a log its
// writer closed or one that ends before a recycled file's stale data.
func (t *logTable) checkAppend(size int64) error { return t.info.CheckAppend(size) }

// proveFrom scans src from the block holding the end of record k-1 (the
// whole log for k == 0) and yields the records from there on.
func (t *logTable) proveFrom(src io.ReaderAt, s *snapshot, k int64, o Options) (provingScan, int64, error) {
	var from int64
	if k > 0 {
		from = t.endOf(k - 1)
	}
	sc := leveldb.NewScanner(src, s.size, leveldb.Options{Strict: o.Strict, Unmasked: t.unmask, LogNum: o.LogNum,
		Start: from / blockSize * blockSize, End: s.size})
	return &scanProof[leveldb.Record]{more: sc.Next, record: sc.Record, fail: sc.Err,
		skip:   func(r leveldb.Record) bool { return r.Off < from },
		same:   func(k int64, r leveldb.Record) bool { return t.sameRecord(k, r) },
		offset: func(r leveldb.Record) int64 { return r.Off }}, k, nil
}

// sameRecord reports whether r is record k of the table.
func (t *logTable) sameRecord(k int64, r leveldb.Record) bool {
	want := t.get(k)
	return want.Off == r.Off && want.Len == r.Len && want.Hdr == r.Hdr && slices.Equal(want.Chunks, r.Chunks)
}

// The capabilities of leveldb logs.
var (
	_ prover        = (*logTable)(nil)
	_ appender      = logDriver{}
	_ creator       = logDriver{}
	_ extender      = (*logTable)(nil)
	_ appendChecker = (*logTable)(nil)
)

// create writes nothing: an empty file is an empty log.
func (logDriver) create(w io.Writer, trailer bool) error { return nil }

// canExtend reports whether a grown log can be taken in by scanning its new
// tail only: not when the meaning of new chunks depends on old ones
// (recyclable and WAL-sync logs) or the log was closed.
func (ot *logTable) canExtend() bool {
	return !ot.info.Recyclable && !ot.info.WALSync && ot.info.EOFMarker < 0
}

// extend scans only the tail of a grown leveldb log. Scanning restarts
// at the block holding the end of the last good record: records before it
// are kept, damage found before it is kept, and everything from it on is
// scanned afresh (a record that was still being written is found whole).
func (ot *logTable) extend(ctx context.Context, t *Table, src io.ReaderAt, old *snapshot, size int64) (*snapshot, error) {
	resume := ot.resume
	start := resume / blockSize * blockSize
	sc := leveldb.NewScanner(src, size, leveldb.Options{Strict: t.opt.Strict, Unmasked: t.opt.Unmasked,
		Start: start, End: size})
	s := *old
	s.size = size
	lt := *ot
	lt.locs = ot.locs.grown()
	s.tab = &lt
	cloned := false
	for sc.Next() {
		rec := sc.Record()
		if rec.Off < resume {
			continue
		}
		if rec.Chunks != nil || rec.Hdr != lt.hdr || rec.Len >= lenInSide {
			if !cloned {
				lt.side, cloned = maps.Clone(ot.side), true
			}
		}
		lt.add(rec)
		s.n++
		s.bytes += rec.Len
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := canceled(ctx); err != nil {
		return nil, err
	}
	res := leveldb.Continue(leveldb.ParallelResult{Damage: old.damage, Info: ot.info}, resume, sc)
	info := res.Info
	s.damage = res.Damage
	lt.info = info
	lt.resume = lt.lastEnd()
	if s.n == old.n {
		lt.resume = max(lt.resume, ot.resume)
	}
	s.flavor = logFlavor(info)
	s.source = "built"
	return &s, nil
}

// append appends to a leveldb log through f, whose lock the caller holds
// and which s describes. It returns what puts the file back.
func (logDriver) append(t *Table, f appendDest, s *snapshot, a appendReq) (undo, error) {
	lt := s.tab.(*logTable)
	if err := lt.info.CheckAppend(s.size); err != nil {
		return undo{}, err // refused before anything is written
	}
	// A torn tail is saved aside, then cut off; a failure later writes it
	// back from the saved copy.
	end, u, err := t.clearTail(f, s)
	if err != nil {
		return u, err
	}
	// Writer options.
	wo := lt.info.AppendOptions(end) // recyclable logs go on in their own chunk flavour
	wo.AppEngine = lt.info.Padded && end > 0 && end%blockSize == 0
	// Write.
	ow := newAppendWriter(f, end, a.o.Sync)
	defer ow.stopSyncing() // on failure, before the caller puts the file back
	w := leveldb.NewWriter(ow, wo)
	var g growth = &counting{}
	if !a.o.CountOnly {
		g = lt.growing(wo.HeaderSize(), a.many())
	}
	if err := a.writeAll(tracked(g, w.WriteRecord, w.WriteRecordFrom)); err != nil {
		return u, err
	}
	if err := w.Close(); err != nil {
		return u, err
	}
	if !lt.unmask {
		a.written.set(g.done(w.Offset()))
		a.written.keep(ow.kept())
	}
	if a.o.Sync {
		return u, ow.syncAll(f, t.path)
	}
	return u, nil
}
