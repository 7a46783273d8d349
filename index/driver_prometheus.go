package index

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync/atomic"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/wlog"
)

// promDriver is the driver of Prometheus TSDB WAL segments (codec/wlog):
// read-only, with incremental extension of the live segment as it grows.
type promDriver struct{}

func (promDriver) probe(r io.ReaderAt, size int64, head []byte) (bool, error) {
	return wlog.Probe(r, size), nil
}

func (promDriver) tried(head []byte) string {
	return fmt.Sprintf("Prometheus WAL segment (no valid fragment at the first %d page starts)", wlog.ProbePages)
}

func (promDriver) readOnly() string {
	return "Prometheus WAL segments are written by the Prometheus server that owns them (it replays, checkpoints and truncates them)"
}

func (promDriver) build(ctx context.Context, r io.ReaderAt, size int64, f codec.Format, o Options) (*snapshot, error) {
	pt := &promTable{wid: newWholeID()}
	s := &snapshot{format: codec.PrometheusWAL, tab: pt, size: size}
	// The scanner checks every page's checksum: it reads the file by
	// pread into its window rather than through a map (see unmapped).
	if err := pt.scan(ctx, unmapped(ctx, r), size, o, 0, s); err != nil {
		return nil, err
	}
	progress{fn: o.Progress, total: size}.report(size)
	return s, nil
}

func (promDriver) decode(d *decoder, f codec.Format, n int64) table {
	t := &promTable{wid: newWholeID()}
	d.prom(t, n)
	return t
}

// promTable stores segment record locations: 17 bytes a record, plus a
// side map for records not in the writer's layout or too long for 32 bits.
type promTable struct {
	off  []int64
	ln   []uint32 // stored bytes; lenInSide means "see side"
	dlen []uint32 // decompressed bytes (stored bytes when uncompressed)
	comp []wlog.Compression
	side map[int64]wlog.Record
	info wlog.Info // LastEnd: where an extension resumes
	wid  uint64    // this table's key in wholeRecords
}

func (t *promTable) get(n int64) wlog.Record {
	if t.ln[n] == lenInSide {
		return t.side[n]
	}
	return wlog.Record{Off: t.off[n], Len: int64(t.ln[n]), Size: int64(t.dlen[n]), Comp: t.comp[n]}
}

func (t *promTable) add(rec wlog.Record) {
	n := int64(len(t.off))
	t.off = append(t.off, rec.Off)
	t.dlen = append(t.dlen, uint32(min(rec.Size, lenInSide)))
	t.comp = append(t.comp, rec.Comp)
	if rec.Frags == nil && rec.Len < lenInSide && rec.Size < lenInSide {
		t.ln = append(t.ln, uint32(rec.Len))
		return
	}
	t.ln = append(t.ln, lenInSide)
	if t.side == nil {
		t.side = map[int64]wlog.Record{}
	}
	if rec.Frags != nil {
		rec.Frags = append([]wlog.Fragment(nil), rec.Frags...)
	}
	t.side[n] = rec
}

func (t *promTable) size(n int64) int64   { return t.get(n).Size }
func (t *promTable) offset(n int64) int64 { return t.off[n] }

// readAt reads an uncompressed record in place and a compressed one
// through the process's cache of whole records, so that the pieces of one
// record cost one decompression.
func (t *promTable) readAt(tb *Table, s *snapshot, n int64, p []byte, off int64) (int, error) {
	rec := t.get(n)
	src := tb.src(s)
	if rec.Comp == wlog.None {
		return wlog.ReadRecord(src, rec, p, off, wlog.Options{})
	}
	return readWhole(t.wid, n, p, off, func() ([]byte, error) { return wlog.Decode(src, rec, nil, wlog.Options{}) })
}

func (t *promTable) samePrefix(old table, n int64) bool {
	o, ok := old.(*promTable)
	if !ok || int64(len(o.off)) < n || int64(len(t.off)) < n {
		return false
	}
	for i := range n {
		a, b := o.get(i), t.get(i)
		if a.Off != b.Off || a.Len != b.Len || a.Size != b.Size || a.Comp != b.Comp {
			return false
		}
	}
	return true
}

// scan adds the records of r (size bytes) from offset start to t and s.
func (t *promTable) scan(ctx context.Context, r io.ReaderAt, size int64, o Options, start int64, s *snapshot) error {
	sc := wlog.NewScanner(r, size, wlog.Options{Strict: o.Strict, Start: start})
	pp := partProgress{ctx: ctx, done: new(atomic.Int64), prog: progress{fn: o.Progress, total: size}, last: start}
	for sc.Next() {
		rec := sc.Record()
		t.add(rec)
		s.n++
		s.bytes += rec.Size
		if !pp.step(rec.Off) {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if err := canceled(ctx); err != nil {
		return err
	}
	in := sc.Info()
	t.info.Records += in.Records
	t.info.Snappy += in.Snappy
	t.info.Zstd += in.Zstd
	t.info.Padded = t.info.Padded || in.Padded
	t.info.LastEnd = in.LastEnd
	s.damage = append(s.damage, sc.Damage()...)
	s.flavor = promFlavor(t.info)
	return nil
}

// promFlavor names a segment for people.
func promFlavor(in wlog.Info) string {
	switch {
	case in.Snappy > 0 && in.Zstd > 0:
		return "Prometheus WAL segment (snappy and zstd-compressed records)"
	case in.Snappy > 0:
		return "Prometheus WAL segment (snappy-compressed records)"
	case in.Zstd > 0:
		return "Prometheus WAL segment (zstd-compressed records)"
	}
	return "Prometheus WAL segment"
}

// proveFrom scans src from the end of record k-1 (the whole segment for
// k == 0) and yields the records from there on.
func (t *promTable) proveFrom(src io.ReaderAt, s *snapshot, k int64, o Options) (provingScan, int64, error) {
	var start int64
	if k > 0 {
		start = t.get(k - 1).End()
	}
	sc := wlog.NewScanner(src, s.size, wlog.Options{Strict: o.Strict, Start: start})
	return &scanProof[wlog.Record]{more: sc.Next, record: sc.Record, fail: sc.Err,
		same: func(k int64, r wlog.Record) bool {
			w := t.get(k)
			return w.Off == r.Off && w.Len == r.Len && w.Size == r.Size && w.Comp == r.Comp && slices.Equal(w.Frags, r.Frags)
		},
		offset: func(r wlog.Record) int64 { return r.Off }}, k, nil
}

var _ prover = (*promTable)(nil)

func (t *promTable) encode(e *encoder) { e.prom(t) }

func (e *encoder) prom(t *promTable) {
	e.i64(t.info.Records)
	e.i64(t.info.Snappy)
	e.i64(t.info.Zstd)
	e.i64(t.info.LastEnd)
	e.bool(t.info.Padded)
	e.i64s(t.off)
	e.u32s(t.ln)
	e.u32s(t.dlen)
	for _, c := range t.comp {
		e.u8(uint8(c))
	}
	e.u32(uint32(len(t.side)))
	for k, r := range t.side {
		e.i64(k)
		e.i64(r.Off)
		e.i64(r.Len)
		e.i64(r.Size)
		e.u8(uint8(r.Comp))
		e.u32(uint32(len(r.Frags)))
		for _, f := range r.Frags {
			e.i64(f.Off)
			e.u32(uint32(f.Len))
		}
	}
}

func (d *decoder) prom(t *promTable, n int64) {
	t.info = wlog.Info{Records: d.i64(), Snappy: d.i64(), Zstd: d.i64(), LastEnd: d.i64(), Padded: d.bool()}
	if d.err != nil || uint64(n)*17 > uint64(d.remaining()) {
		d.err = errBadCache
		return
	}
	t.off, t.ln, t.dlen = d.i64s(n), d.u32s(n), d.u32s(n)
	t.comp = make([]wlog.Compression, n)
	for i := range t.comp {
		t.comp[i] = wlog.Compression(d.u8())
	}
	ns := d.count(37)
	t.side = make(map[int64]wlog.Record, ns)
	for range ns {
		k := d.i64()
		r := wlog.Record{Off: d.i64(), Len: d.i64(), Size: d.i64(), Comp: wlog.Compression(d.u8())}
		nf := d.count(12)
		if nf > 0 {
			r.Frags = make([]wlog.Fragment, 0, nf)
		}
		for range nf {
			r.Frags = append(r.Frags, wlog.Fragment{Off: d.i64(), Len: int32(d.u32())})
		}
		if d.err != nil || k < 0 || k >= n || t.ln[k] != lenInSide || r.Off != t.off[k] {
			d.err = errBadCache
			return
		}
		t.side[k] = r
	}
}

// check verifies a decoded table: records in order, each inside the file,
// with known compressions and sizes within the codec's limit.
func (t *promTable) check(s *snapshot) error {
	if int64(len(t.off)) != s.n || int64(len(t.ln)) != s.n || int64(len(t.dlen)) != s.n || int64(len(t.comp)) != s.n {
		return fmt.Errorf("%d records, %d offsets, %d lengths", s.n, len(t.off), len(t.ln))
	}
	if t.info.LastEnd < 0 || t.info.LastEnd > s.size {
		return fmt.Errorf("resume %d outside %d bytes", t.info.LastEnd, s.size)
	}
	var end, total int64
	for i := range s.n {
		if t.ln[i] == lenInSide {
			if _, ok := t.side[i]; !ok {
				return fmt.Errorf("record %d: no side entry", i)
			}
		}
		rec := t.get(i)
		if rec.Comp > wlog.Zstd || rec.Len < 0 || rec.Size < 0 ||
			(rec.Comp == wlog.None && rec.Size != rec.Len) || (rec.Comp != wlog.None && rec.Size > wlog.DefaultMaxRecord) {
			return fmt.Errorf("record %d: %d bytes stored, %d decoded, compression %v", i, rec.Len, rec.Size, rec.Comp)
		}
		var got int64
		for k := 0; ; k++ {
			f, ok := wlog.FragmentAt(rec, k)
			if !ok {
				if k == 0 {
					return fmt.Errorf("record %d has no fragment", i)
				}
				break
			}
			if f.Off < end || f.Len < 0 || f.Off+wlog.HeaderSize+int64(f.Len) > s.size {
				return fmt.Errorf("record %d fragment %d at %d outside the file", i, k, f.Off)
			}
			end = f.Off + wlog.HeaderSize + int64(f.Len)
			got += int64(f.Len)
		}
		if got != rec.Len {
			return fmt.Errorf("record %d: fragments hold %d of %d bytes", i, got, rec.Len)
		}
		total += rec.Size
	}
	if total != s.bytes {
		return fmt.Errorf("%d payload bytes, table says %d", total, s.bytes)
	}
	return nil
}

// canExtend: a grown segment (the live one) is taken in from the end of
// its last intact record.
func (t *promTable) canExtend() bool { return true }

// extend scans only what follows the last intact record of a grown
// segment: records and damage before it are kept, everything from it on
// (a record that was still being written included) is scanned afresh.
func (ot *promTable) extend(ctx context.Context, t *Table, src io.ReaderAt, old *snapshot, size int64) (*snapshot, error) {
	resume := ot.info.LastEnd
	s := *old
	s.size = size
	s.damage = nil
	for _, d := range old.damage {
		if d.Off < resume {
			s.damage = append(s.damage, d)
		}
	}
	// The records before resume stay what they were: nt keeps ot's key
	// in wholeRecords.
	nt := *ot
	if ot.side != nil {
		nt.side = make(map[int64]wlog.Record, len(ot.side))
		for k, v := range ot.side {
			nt.side[k] = v
		}
	}
	// The arrays are shared with the old table up to its length: appends
	// past it never change what the old table sees.
	s.tab = &nt
	if err := nt.scan(ctx, src, size, t.opt, resume, &s); err != nil {
		return nil, err
	}
	if s.n == old.n {
		nt.info.LastEnd = max(nt.info.LastEnd, resume)
	}
	s.source = "built"
	return &s, nil
}

// The capabilities of Prometheus WAL segments.
var (
	_ readOnly = promDriver{}
	_ prober   = promDriver{}
	_ extender = (*promTable)(nil)
)
