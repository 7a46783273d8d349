package index

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/recordio"
)

// rioDriver is the driver of grailbio recordio v2 files (codec/recordio):
// appends through RecordIOAppender, crash repair at open.
type rioDriver struct{}

func (rioDriver) extensions() []string { return []string{".rio", ".recordio"} }

func (rioDriver) probe(r io.ReaderAt, size int64, head []byte) (bool, error) {
	f, err := recordio.ProbeHead(head)
	return f == codec.RecordIO, err
}

func (rioDriver) tried(head []byte) string {
	return fmt.Sprintf("grailbio recordio (first 8 bytes % x are not the header magic)", head[:min(8, len(head))])
}

func (legacyDriver) tried(head []byte) string {
	return "grailbio legacy recordio (no legacy record header)"
}

// probeLate recognises a recordio file whose header chunk is damaged past
// recognition but whose next chunk starts a valid body or trailer block;
// Detect tries it after every format's probe failed.
func (rioDriver) probeLate(r io.ReaderAt, size int64) bool { return recordio.ProbeBody(r, size) }

func (rioDriver) build(ctx context.Context, r io.ReaderAt, size int64, f codec.Format, o Options) (*snapshot, error) {
	return buildRIO(ctx, r, size, f, o)
}

func (rioDriver) decode(d *decoder, f codec.Format, n int64) table { return decodeRIO(d, n) }

// repair undoes what a crashed append left behind; see RepairRecordIO.
func (rioDriver) repair(f appendDest, path string, p tailPolicy) (bool, error) {
	return repairRecordIOFile(f, path, p)
}

// legacyDriver is the driver of grailbio legacy recordio files, which recfs
// only reads.
type legacyDriver struct{}

func (legacyDriver) probe(r io.ReaderAt, size int64, head []byte) (bool, error) {
	f, err := recordio.ProbeHead(head)
	return f == codec.RecordIOLegacy, err
}

func (legacyDriver) build(ctx context.Context, r io.ReaderAt, size int64, f codec.Format, o Options) (*snapshot, error) {
	return buildRIO(ctx, r, size, f, o)
}

func (legacyDriver) decode(d *decoder, f codec.Format, n int64) table { return decodeRIO(d, n) }

func (legacyDriver) readOnly() string {
	return "grailbio legacy recordio files are read, never written (grailbio's own writers write the current format)"
}

func decodeRIO(d *decoder, n int64) table {
	t := &rioTable{}
	d.rio(t, n)
	return t
}

// rioTable stores recordio item locations: 8 bytes an item plus one entry
// per block (recordio items share their block's entry).
type rioTable struct {
	blocks  []rioBlock
	ioff    column[uint32] // item offset inside its decoded block
	ilen    column[uint32] // item length; lenInSide means "see big"
	big     map[int64]int64
	header  []HeaderEntry
	transf  []string
	trailer recordio.ItemLoc
	hasTrl  bool
	legacyT string

	rdMu   sync.Mutex
	rd     *recordio.Reader // lazily built random reader of rdSnap
	rdSnap *snapshot        // the snapshot (one source version) rd reads
}

// rioBlock is one block (v2) or legacy record and the number of its first item.
type rioBlock struct {
	off   int64
	first int64
}

// noRIO is the recordio facts of a table of another format: no header, no
// trailer.
var noRIO rioTable

// rioT returns s's recordio table, or an empty one for other formats.
func (s *snapshot) rioT() *rioTable {
	if t, ok := s.tab.(*rioTable); ok {
		return t
	}
	return &noRIO
}

func (t *rioTable) size(n int64) int64 {
	if l := t.ilen.at(n); l != lenInSide {
		return int64(l)
	}
	return t.big[n]
}

func (t *rioTable) offset(n int64) int64 { return t.blocks[t.blockOf(n)].off }

// blockOf returns the index in blocks of the block holding item n.
func (r *rioTable) blockOf(n int64) int {
	return sort.Search(len(r.blocks), func(i int) bool { return r.blocks[i].first > n }) - 1
}

// loc rebuilds the codec location of recordio item n.
func (t *rioTable) loc(n int64) recordio.ItemLoc {
	b := t.blockOf(n)
	blk := t.blocks[b]
	return recordio.ItemLoc{Block: blk.off, Item: int(n - blk.first), Off: int64(t.ioff.at(n)), Len: t.size(n)}
}

// reader returns the random reader of snapshot s of tb (s's table is t).
// A reader (and its cache of decoded blocks) belongs to one snapshot,
// that is one version of the source: a block decoded from an older version
// is never served for a newer one. Only the reader of tb's current
// snapshot is kept.
func (t *rioTable) reader(tb *Table, s *snapshot) (*recordio.Reader, error) {
	t.rdMu.Lock()
	defer t.rdMu.Unlock()
	if t.rd != nil && t.rdSnap == s {
		return t.rd, nil
	}
	// Decoded data is kept in the process's shared cache
	// (recordio.DefaultBlockCache), under its byte budget.
	rd, err := recordio.NewReader(s.src, s.size, s.format, t.transf,
		recordio.Options{LegacyTransform: t.legacyT}, 1)
	if err != nil {
		return nil, err
	}
	if s == tb.s() {
		t.rd, t.rdSnap = rd, s
	}
	return rd, nil
}

func (t *rioTable) readAt(tb *Table, s *snapshot, n int64, p []byte, off int64) (int, error) {
	rd, err := t.reader(tb, s)
	if err != nil {
		return 0, err
	}
	return rd.ReadItem(t.loc(n), p, off)
}

func (t *rioTable) samePrefix(old table, n int64) bool {
	o, ok := old.(*rioTable)
	if !ok {
		return false
	}
	for i := range n {
		if o.loc(i) != t.loc(i) {
			return false
		}
	}
	return true
}

func (t *rioTable) encode(e *encoder) { e.rio(t) }

func (e *encoder) rio(t *rioTable) {
	e.u32(uint32(len(t.blocks)))
	for _, b := range t.blocks {
		e.i64(b.off)
		e.i64(b.first)
		e.spill()
	}
	e.u32col(&t.ioff)
	e.u32col(&t.ilen)
	e.u32(uint32(len(t.big)))
	for k, v := range t.big {
		e.i64(k)
		e.i64(v)
	}
	e.u32(uint32(len(t.header)))
	for _, h := range t.header {
		e.str(h.Key)
		switch v := h.Value.(type) {
		case bool:
			e.u8(1)
			e.bool(v)
		case int64:
			e.u8(2)
			e.i64(v)
		case uint64:
			e.u8(3)
			e.u64(v)
		case string:
			e.u8(4)
			e.str(v)
		default:
			e.u8(4)
			e.str(fmt.Sprint(v))
		}
	}
	e.u32(uint32(len(t.transf)))
	for _, s := range t.transf {
		e.str(s)
	}
	e.bool(t.hasTrl)
	e.i64(t.trailer.Block)
	e.i64(int64(t.trailer.Item))
	e.i64(t.trailer.Off)
	e.i64(t.trailer.Len)
	e.str(t.legacyT)
}

func (d *decoder) rio(t *rioTable, n int64) {
	nb := d.count(16)
	t.blocks = make([]rioBlock, 0, nb)
	for range nb {
		b := rioBlock{off: d.i64(), first: d.i64()}
		if b.first < 0 || b.first > n || len(t.blocks) > 0 && b.first <= t.blocks[len(t.blocks)-1].first {
			d.err = errBadCache
			return
		}
		t.blocks = append(t.blocks, b)
	}
	if n > 0 && (nb == 0 || t.blocks[0].first != 0) {
		d.err = errBadCache
		return
	}
	if d.err != nil || uint64(n)*8 > uint64(d.remaining()) {
		d.err = errBadCache
		return
	}
	t.ioff, t.ilen = d.u32col(n), d.u32col(n)
	nbig := d.count(16)
	for range nbig {
		if t.big == nil {
			t.big = map[int64]int64{}
		}
		k, v := d.i64(), d.i64()
		if k < 0 || k >= n {
			d.err = errBadCache
			return
		}
		t.big[k] = v
	}
	for i := range t.ilen.len() {
		if _, ok := t.big[i]; t.ilen.at(i) == lenInSide && !ok {
			d.err = errBadCache
			return
		}
	}
	nh := d.count(6)
	for range nh {
		h := HeaderEntry{Key: d.str()}
		switch d.u8() {
		case 1:
			h.Value = d.bool()
		case 2:
			h.Value = d.i64()
		case 3:
			h.Value = d.u64()
		case 4:
			h.Value = d.str()
		default:
			d.err = errBadCache
			return
		}
		t.header = append(t.header, h)
	}
	nt := d.count(4)
	for range nt {
		t.transf = append(t.transf, d.str())
	}
	t.hasTrl = d.bool()
	t.trailer = recordio.ItemLoc{Block: d.i64(), Item: int(d.i64()), Off: d.i64(), Len: d.i64()}
	t.legacyT = d.str()
}

// checkRIO checks a recordio table: blocks in increasing file order inside
// the file, and (v2) the items of a block packed back to back.
func (t *rioTable) check(s *snapshot) error {
	if t.ioff.len() != s.n || t.ilen.len() != s.n {
		return fmt.Errorf("%d items, %d offsets, %d lengths", s.n, t.ioff.len(), t.ilen.len())
	}
	for b, blk := range t.blocks {
		if blk.off < 0 || blk.off >= s.size || b > 0 && blk.off <= t.blocks[b-1].off {
			return fmt.Errorf("block %d at %d", b, blk.off)
		}
	}
	var total int64
	for i := range s.n {
		l := t.size(i)
		if l < 0 {
			return fmt.Errorf("item %d has length %d", i, l)
		}
		total += l
		b := t.blockOf(i)
		if b < 0 {
			return fmt.Errorf("item %d in no block", i)
		}
		if s.format == codec.RecordIO && t.blocks[b].first != i && int64(t.ioff.at(i)) != int64(t.ioff.at(i-1))+t.size(i-1) {
			return fmt.Errorf("item %d at %d, not after item %d", i, t.ioff.at(i), i-1)
		}
	}
	if total != s.bytes {
		return fmt.Errorf("%d payload bytes, table says %d", total, s.bytes)
	}
	if t.hasTrl && (t.trailer.Block < 0 || t.trailer.Block >= s.size || t.trailer.Len < 0 || t.trailer.Off < 0) {
		return fmt.Errorf("trailer at %d", t.trailer.Block)
	}
	return nil
}

// tail returns where the bytes after the last block of the recordio file
// src (which s describes) start when its scan found damage reaching the
// end of the file (-1 otherwise), whether they are a torn block, and when
// not, what they are instead (see repairRecordIO).
func (t *rioTable) tail(src io.ReaderAt, s *snapshot) (off int64, torn bool, reason string) {
	if s.format != codec.RecordIO || !slices.ContainsFunc(s.damage, func(d codec.Damage) bool { return d.Off+d.Len == s.size }) {
		return -1, false, ""
	}
	end, err := recordio.ConsistentEnd(src, s.size)
	if err != nil || end >= s.size {
		return -1, false, ""
	}
	torn, reason = recordio.TornTail(src, end, s.size)
	return end, torn, reason
}

// proveFrom scans src from the block holding item k-1 (the whole file for
// k == 0) and yields the items after it.
func (t *rioTable) proveFrom(src io.ReaderAt, s *snapshot, k int64, o Options) (provingScan, int64, error) {
	ro := recordio.Options{Strict: o.Strict, LegacyTransform: t.legacyT}
	last := recordio.ItemLoc{Block: -1} // the last item proven: it and the ones before it in its block are passed over
	if k > 0 {
		last = t.loc(k - 1)
		ro.Start = last.Block
	}
	sc, err := recordio.NewScanner(src, s.size, s.format, ro)
	if err != nil {
		return nil, 0, err
	}
	return &scanProof[recordio.ItemLoc]{more: sc.Next, record: sc.Item, fail: sc.Err,
		skip:   func(l recordio.ItemLoc) bool { return l.Block == last.Block && l.Item <= last.Item },
		same:   func(k int64, l recordio.ItemLoc) bool { return t.loc(k) == l },
		offset: func(l recordio.ItemLoc) int64 { return l.Block }}, k, nil
}

// The capabilities of recordio v2 files; legacy files have none.
var (
	_ prover     = (*rioTable)(nil)
	_ appender   = rioDriver{}
	_ creator    = rioDriver{}
	_ repairer   = rioDriver{}
	_ probeLater = rioDriver{}
)

// create writes a header-only recordio file, with an empty trailer when
// trailer is set.
func (rioDriver) create(w io.Writer, trailer bool) error {
	rw, err := recordio.NewWriter(w, recordio.WriterOptions{Trailer: trailer})
	if err == nil && trailer {
		err = rw.SetTrailer(nil)
	}
	if err == nil {
		err = rw.Close()
	}
	return err
}

// itemSources converts streams into the recordio writer's items.
func itemSources(streams []Stream) []recordio.ItemSource {
	items := make([]recordio.ItemSource, len(streams))
	for i, s := range streams {
		items[i] = recordio.ItemSource(s)
	}
	return items
}

// append appends items to a recordio v2 file through f, whose lock the
// caller holds and which s describes. It returns what puts the file back.
func (rioDriver) append(t *Table, f appendDest, s *snapshot, r appendReq) (undo, error) {
	r, err := r.gathered()
	if err != nil {
		return undo{}, err // nothing written yet
	}
	items, streams := r.recs, r.streams
	a, err := newRecordIOAppender(f, t.path, RecordIOAppendOptions{})
	if err != nil {
		return undo{}, err
	}
	defer a.Close()
	u, err := saveUndo(f, s.size, a.WriteOffset())
	if err != nil {
		return undo{}, err
	}
	if streams != nil {
		return u, a.AppendFrom(itemSources(streams)...)
	}
	return u, a.Append(items...)
}
