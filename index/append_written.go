package index

import (
	"context"
	"fmt"
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
}

// set records w2 as what was written.
func (w *written) set(w2 written) {
	if w != nil {
		*w = w2
	}
}

// adoptWritten makes the table the writer extended the table's new
// snapshot, instead of scanning the bytes the append wrote (see
// checkWritten for what is checked). t.mu and the append lock are held.
func (t *Table) adoptWritten(old *snapshot, w *written) error {
	start := time.Now()
	src, id, err := t.checkWritten(old, w)
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
// covered still start as they did. It returns the file as it is now and
// its identity. t.mu and the append lock are held.
func (t *Table) checkWritten(old *snapshot, w *written) (*local.File, identity, error) {
	src, err := t.current()
	if err != nil {
		return nil, identity{}, err
	}
	// The head checksum: the prefix check, and the new identity's head
	// once the old file covered the whole head range (one read, not two).
	oldHead, err := rangeCRC(src, 0, min(old.size, identBlock))
	if err != nil {
		return nil, identity{}, err
	}
	head := oldHead
	if old.size < identBlock {
		if head, err = rangeCRC(src, 0, min(src.Size(), identBlock)); err != nil {
			return nil, identity{}, err
		}
	}
	id, err := identifyHead(src, head)
	if err != nil {
		return nil, identity{}, err
	}
	switch {
	case !id.sameFile(old.id):
		return nil, identity{}, ErrReplaced
	case id.size != w.end:
		return nil, identity{}, fmt.Errorf("the file ends at %d after an append that ended at %d", id.size, w.end)
	case oldHead != old.id.head:
		return nil, identity{}, fmt.Errorf("%w under an append", ErrChanged)
	}
	return src, id, nil
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
