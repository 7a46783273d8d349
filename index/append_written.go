package index

import (
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"time"

	"github.com/recfs/recfs/codec/leveldb"
	"github.com/recfs/recfs/codec/tfrecord"
	"github.com/recfs/recfs/source/local"
)

// written is what a writer knows of the records it has just appended: the
// format's table extended with them (from the offsets and lengths the
// writer framed them at, the same canonical layout a scan finds; nil for a
// CountOnly append), how many there are, their payload bytes and where the
// file ends after them.
type written struct {
	tab   table
	n     int64
	bytes int64
	end   int64
	fix   func(s *snapshot) // adjusts the new snapshot's format facts
	kept  *keptBytes        // the bytes the writer wrote (their last identBlock), nil if not kept
}

// set records w2 as what was written.
func (w *written) set(w2 written) {
	if w != nil {
		*w = w2
	}
}

// keep records the bytes the writer wrote.
func (w *written) keep(k *keptBytes) {
	if w != nil {
		w.kept = k
	}
}

// adoptWritten makes the table the writer extended the table's new
// snapshot, instead of scanning the bytes the append wrote (see
// checkWritten for what is checked). t.mu and the append lock are held.
func (t *Table) adoptWritten(old *snapshot, w *written) error {
	start := time.Now()
	src, id, last, err := t.checkWritten(old, w)
	if err != nil {
		return err
	}
	s := *old
	s.tab, s.n, s.bytes, s.size = w.tab, old.n+w.n, old.bytes+w.bytes, id.size
	if w.fix != nil {
		w.fix(&s)
	}
	s.id, s.elapsed, s.origin = id, time.Since(start), src.Identity().Key
	s.setSource(src)
	s.proof = old.proof.carried()
	s.last = last
	s.source = "built"
	if o, ok := old.src.(*local.File); !ok || !o.SameDescriptor(src) {
		s.gen++ // another descriptor (appendedTo's rule; the rest it checks is checked above)
	}
	t.swapSnap(old, &s)
	if cf := cachePath(t.opt.CacheDir, src.Identity().Key); cf != "" {
		t.save(context.Background(), cf, &s)
	}
	return nil
}

// checkWritten checks the file after the writer appended w to what old
// described, without reading back the bytes it wrote: the writer computed
// their CRCs and framing, so reading them would prove only that the page
// cache returns what was just put there. What is checked is what another
// party could have changed: the file is still the same file, it ends
// exactly where the writer's last block ended, and the bytes the old table
// covered still start as they did. It returns the file as it is now, its
// identity and its last bytes (see identifyWritten). t.mu and the append
// lock are held.
func (t *Table) checkWritten(old *snapshot, w *written) (*local.File, identity, *lastBytes, error) {
	src, err := t.current()
	if err != nil {
		return nil, identity{}, nil, err
	}
	// The head checksum: the prefix check, and the new identity's head
	// once the old file covered the whole head range (one read, not two).
	oldHead, err := rangeCRC(src, 0, min(old.size, identBlock))
	if err != nil {
		return nil, identity{}, nil, err
	}
	head := oldHead
	if old.size < identBlock {
		if head, err = rangeCRC(src, 0, min(src.Size(), identBlock)); err != nil {
			return nil, identity{}, nil, err
		}
	}
	id, last, err := identifyWritten(src, head, old, w)
	if err != nil {
		return nil, identity{}, nil, err
	}
	switch {
	case !id.sameFile(old.id):
		return nil, identity{}, nil, ErrReplaced
	case id.size != w.end:
		return nil, identity{}, nil, fmt.Errorf("the file ends at %d after an append that ended at %d", id.size, w.end)
	case oldHead != old.id.head:
		return nil, identity{}, nil, fmt.Errorf("%w under an append", ErrChanged)
	}
	return src, id, last, nil
}

// identifyWritten is identifyHead(src, head) for the file old described
// after w was appended to it, with the file's last bytes for the next
// append's identity. The tail checksum covers the file's last identBlock
// bytes: when old kept its last bytes and the writer kept what it wrote
// right after them, they are those bytes and nothing is read (each append
// would otherwise read identBlock bytes back only to checksum them); else
// they are read, once, and kept from then on. The kept bytes are checked
// against old's identity first. A file someone else rewrote under them
// without moving its size or times gets an identity whose tail checksum
// differs from the file's: a reopen's check of a saved table finds it
// stale and rescans. (A rewrite before the append moves the ctime, and
// the append's catch-up rescans then.)
func identifyWritten(src *local.File, head uint32, old *snapshot, w *written) (identity, *lastBytes, error) {
	if last := old.last.extend(old, w.kept, src.Size()); last != nil {
		st := src.FileStat()
		id := identity{size: src.Size(), version: src.Identity().Version, head: head,
			dev: st.Dev, ino: st.Ino, mtime: st.Mtime, ctime: st.Ctime, tail: last.crc}
		return id, last, nil
	}
	id, b, err := identifyHeadBytes(src, head)
	if err != nil {
		return identity{}, nil, err
	}
	return id, &lastBytes{end: id.size, crc: id.tail, b: b}, nil
}

// keptBytes are the bytes a writer wrote at [from, to): the last
// min(to-from, identBlock) of them.
type keptBytes struct {
	from, to int64
	b        []byte
}

// lastBytes are a file's last bytes when it ended at end: b ends with its
// last min(end, identBlock) bytes, whose CRC-32C (the identity's tail) is
// crc. Appends extend b in place past its length (only the newest
// snapshot's is extended: appends are serialised), and copy its last
// identBlock bytes to a new array when it is full.
type lastBytes struct {
	end int64
	crc uint32
	b   []byte
}

// extend returns the last bytes of the file that old described (l must
// be old's: same end, same tail checksum) after k was written at its end,
// the file now ending at size; nil when they are not known that way.
func (l *lastBytes) extend(old *snapshot, k *keptBytes, size int64) *lastBytes {
	if l == nil || k == nil || l.end != old.size || l.crc != old.id.tail || k.from != l.end || k.to != size ||
		int64(len(k.b)) != min(k.to-k.from, identBlock) {
		return nil
	}
	b := l.b
	if len(b)+len(k.b) > cap(b) {
		keep := b[len(b)-int(min(l.end, identBlock)):]
		nb := make([]byte, len(keep), 2*identBlock+len(k.b))
		copy(nb, keep)
		b = nb
	}
	b = append(b, k.b...)
	tail := b[len(b)-int(min(size, identBlock)):]
	return &lastBytes{end: size, crc: crc32.Checksum(tail, castagnoliTable), b: b}
}

// keepLast returns tail with p appended, cut to its last identBlock bytes.
func keepLast(tail, p []byte) []byte {
	if len(p) >= identBlock {
		return append(tail[:0], p[len(p)-identBlock:]...)
	}
	if over := len(tail) + len(p) - identBlock; over > 0 {
		tail = append(tail[:0], tail[over:]...)
	}
	return append(tail, p...)
}

// recordAdder is a table growing by the records a writer frames: add takes
// each one's offset and payload size.
type recordAdder interface{ add(off, size int64) }

// growth is what a writer's records go to: a table growing by them
// (logGrowth, tfrGrowth), or only their count (counting); done returns
// what was written, the file ending at end.
type growth interface {
	recordAdder
	done(end int64) written
}

// counting is a growth that only counts the records and their bytes
// (AppendOptions.CountOnly).
type counting struct{ n, bytes int64 }

func (c *counting) add(off, size int64) { c.n, c.bytes = c.n+1, c.bytes+size }

func (c *counting) done(end int64) written { return written{n: c.n, bytes: c.bytes, end: end} }

// writeFunc and writeFromFunc are a writer's WriteRecord and
// WriteRecordFrom: each returns the offset of the record it wrote.
type (
	writeFunc     = func(p []byte) (int64, error)
	writeFromFunc = func(r io.Reader, size int64) (int64, error)
)

// tracked wraps a writer's WriteRecord and WriteRecordFrom so that every
// record they write is added to g.
func tracked(g recordAdder, write writeFunc, writeFrom writeFromFunc) (writeFunc, writeFromFunc) {
	tw := func(p []byte) (int64, error) {
		off, err := write(p)
		g.add(off, int64(len(p)))
		return off, err
	}
	tf := func(r io.Reader, size int64) (int64, error) {
		off, err := writeFrom(r, size)
		g.add(off, size)
		return off, err
	}
	return tw, tf
}

// logGrowth is a leveldb table being extended by the records a writer
// appends, copy-on-write: the table readers hold stays as it was.
type logGrowth struct {
	lt     logTable
	hdr    uint8
	cloned bool
	n      int64
	bytes  int64
}

// growing returns a growth of ot for records written with chunk headers of
// hdr bytes; with many, for many records (see manyRecords).
func (ot *logTable) growing(hdr uint8, many bool) *logGrowth {
	g := &logGrowth{lt: *ot, hdr: hdr}
	g.lt.locs = ot.locs.grown()
	if many {
		g.lt.locs.reserve()
	}
	return g
}

// add adds the record of size payload bytes the writer put at off.
func (g *logGrowth) add(off, size int64) {
	rec := leveldb.Record{Off: off, Len: size, Hdr: g.hdr}
	if !g.cloned && (rec.Hdr != g.lt.hdr || rec.Len >= lenInSide) && (g.lt.locs.len() > 0 || len(g.lt.side) > 0 || g.lt.hdr != 0) {
		g.lt.side, g.cloned = maps.Clone(g.lt.side), true
	}
	g.lt.add(rec)
	g.n++
	g.bytes += size
}

// done returns what was written, the log now ending at end.
func (g *logGrowth) done(end int64) written {
	g.lt.info.End = end
	g.lt.resume = g.lt.lastEnd()
	info := g.lt.info
	return written{tab: &g.lt, n: g.n, bytes: g.bytes, end: end,
		fix: func(s *snapshot) { s.flavor = logFlavor(info) }}
}

// tfrGrowth is a plain TFRecord table being extended, copy-on-write, by
// the records a writer appends from end on.
type tfrGrowth struct {
	tt     tfrTable
	cloned bool
	n      int64
	bytes  int64
	end    int64
}

// growing returns a growth of ot for records written from end on; with
// many, for many records (see manyRecords).
func (ot *tfrTable) growing(end int64, many bool) *tfrGrowth {
	g := &tfrGrowth{tt: tfrTable{comp: ot.comp, locs: ot.locs.grown(), side: ot.side, resume: ot.resume}, end: end}
	if many {
		g.tt.locs.reserve()
	}
	return g
}

// add adds the record of size data bytes the writer put at off (its
// length field).
func (g *tfrGrowth) add(off, size int64) {
	if size >= lenInSide && !g.cloned {
		g.tt.side, g.cloned = maps.Clone(g.tt.side), true
	}
	g.tt.add(tfrecord.Record{Off: off, Len: size})
	g.n++
	g.bytes += size
	g.end = off + tfrecord.Overhead + size
}

// done returns what was written (the file ends where the last record
// ends).
func (g *tfrGrowth) done(int64) written {
	if g.n > 0 {
		g.tt.resume = g.end
	}
	return written{tab: &g.tt, n: g.n, bytes: g.bytes, end: g.end}
}
