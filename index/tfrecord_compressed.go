package index

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/recordio"
	"github.com/recfs/recfs/codec/tfrecord"
	"github.com/recfs/recfs/source"
)

// GZIP- and ZLIB-compressed TFRecord files. Their table holds record
// locations in the decompressed stream and the stream's checkpoints
// (tfrecord.SeekIndex), made in the one pass that builds the table: a read
// decompresses from the checkpoint before its record, never from the start
// of the file, and checks what it decompressed against the checkpoint's
// unit checksums. Decompressed bytes are kept in the process's decoded-data
// cache (recordio.DefaultBlockCache), under the budget recordio blocks use.

// decodedCache is the cache compressed TFRecord readers keep decompressed
// units in.
func decodedCache() tfrecord.SpanCache { return recordio.DefaultBlockCache() }

// progressStep is how many compressed bytes go by between progress
// reports of a compressed build.
const progressStep = 1 << 20

// buildTFRCompressed indexes a compressed TFRecord file into s (whose
// table is a *tfrTable), reading it once, through one sequential stream
// when the source offers one.
func buildTFRCompressed(ctx context.Context, r io.ReaderAt, size int64, comp tfrecord.Compression, o Options, s *snapshot) (*snapshot, error) {
	prog := progress{fn: o.Progress, total: size}
	xo := tfrecord.IndexOptions{Strict: o.Strict, Cache: decodedCache()}
	var next int64
	xo.Progress = func(done int64) {
		if done >= next {
			prog.report(done)
			next = done + progressStep
		}
	}
	if st, ok := r.(source.Streamer); ok {
		stream, err := st.Stream(ctx, 0)
		if err != nil {
			return nil, err
		}
		defer stream.Close()
		xo.Stream = stream
	}
	part, res, err := indexTFRCompressed(ctx, r, size, comp, xo)
	if err != nil {
		return nil, err
	}
	part.locs.trim()
	s.tab = &tfrTable{comp: comp, dsize: res.Index.Size, seek: res.Index, locs: part.locs, side: part.side, resume: res.Info.LastEnd}
	s.n, s.bytes, s.damage, s.size = part.locs.len(), part.bytes, res.Damage, size
	prog.report(size)
	return s, nil
}

// indexTFRCompressed runs tfrecord.IndexCompressed and keeps the records
// it finds, within the bound on a compressed file's table.
func indexTFRCompressed(ctx context.Context, r io.ReaderAt, size int64, comp tfrecord.Compression, o tfrecord.IndexOptions) (*tfrPart, tfrecord.IndexResult, error) {
	part := &tfrPart{}
	limit := inflatedRecsPerByte*size + inflatedRecsFree
	over := false
	res, err := tfrecord.IndexCompressed(ctx, r, size, comp, o, func(rec tfrecord.Record) bool {
		if part.locs.len() >= limit {
			over = true
			return false
		}
		part.add(rec)
		part.bytes += rec.Len
		return true
	})
	if cerr := canceled(ctx); cerr != nil {
		return nil, res, cerr
	}
	if err != nil {
		return nil, res, err
	}
	if over {
		return nil, res, fmt.Errorf("%w: %v-compressed TFRecord file of %d bytes holds more than %d records (decompression bomb?)", codec.ErrLimit, comp, size, limit)
	}
	return part, res, nil
}

// extendCompressed takes in what was appended to a compressed file (a
// shard still being written): decompression restarts at the checkpoint
// before the end of the last intact record, records are looked for from
// there on; records and damage before it are kept.
func (ot *tfrTable) extendCompressed(ctx context.Context, t *Table, src io.ReaderAt, old *snapshot, size int64) (*snapshot, error) {
	ot.mu.Lock()
	from := ot.seek // a proof may replace it (proveCompressed)
	ot.mu.Unlock()
	o := tfrecord.IndexOptions{Strict: t.opt.Strict, Cache: decodedCache(), From: from, Resume: ot.resume}
	part, res, err := indexTFRCompressed(ctx, src, size, ot.comp, o)
	if err != nil {
		return nil, err
	}
	s := *old
	s.size = size
	tt := &tfrTable{comp: ot.comp, dsize: res.Index.Size, seek: res.Index, locs: ot.locs.grown(), side: ot.side, resume: ot.resume, saved: ot.saved}
	s.tab = tt
	cloned := false
	for i := range part.locs.len() {
		rec := part.get(i)
		if rec.Len >= lenInSide && !cloned {
			tt.side, cloned = maps.Clone(ot.side), true
		}
		tt.add(rec)
	}
	s.n += part.locs.len()
	s.bytes += part.bytes
	var dmg []codec.Damage
	for _, d := range old.damage {
		if d.Off < ot.resume {
			dmg = append(dmg, d)
		}
	}
	for _, d := range res.Damage {
		if d.Off >= ot.resume {
			dmg = append(dmg, d)
		}
	}
	s.damage = dmg
	if res.Info.Records > 0 {
		tt.resume = res.Info.LastEnd
	}
	s.source = "built"
	return &s, nil
}

// inflated returns the reader of the decompressed stream of src, the
// version of the source (size bytes) this table describes. Its
// decompression stops when done closes (the table's Close: a read of a
// long span of very compressible data then fails with ErrStopped rather
// than keep an unmount waiting).
func (t *tfrTable) inflated(src io.ReaderAt, size int64, done <-chan struct{}) (*tfrecord.Inflated, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.inf != nil && t.infSrc == src {
		return t.inf, nil
	}
	inf, err := tfrecord.NewInflated(src, size, t.seek, tfrecord.InflatedOptions{Cache: decodedCache(), Done: done})
	if err != nil {
		return nil, err
	}
	t.inf, t.infSrc = inf, src
	return inf, nil
}

// closeSaved closes the cache file the table's checkpoint windows are
// read from (its Table's Close): reads that need one then stop.
// savedBlob returns the blob the table's stored windows are read from.
func (t *tfrTable) savedBlob() *cacheBlob { return t.saved }

func (t *tfrTable) closeSaved() {
	if t.saved != nil {
		t.saved.close()
	}
}

// checkSeek verifies the checkpoints of a decoded table of a compressed
// file of size bytes.
func (t *tfrTable) checkSeek(size int64) error {
	if t.seek == nil || t.seek.Comp != t.comp || t.seek.Size != t.dsize {
		return fmt.Errorf("no checkpoints for the %d-byte %v stream", t.dsize, t.comp)
	}
	return t.seek.Check(size)
}

// streamSize is the size of the byte stream record and damage offsets are
// in: the decompressed stream of a compressed file.
func (t *tfrTable) streamSize(size int64) int64 {
	if t.comp == tfrecord.None {
		return size
	}
	return t.dsize
}

// seek writes the checkpoints of a compressed stream: each one's
// position, unit checksums, deflated window length and the window's
// SHA-256 in the body, its window in the blob region (cache_blob.go), so
// that loading the table reads no window and a read reads only the window
// of the checkpoint it starts from (tfrecord.StoredWindow).
func (e *encoder) seek(x *tfrecord.SeekIndex) {
	e.u32(uint32(len(x.Points)))
	for i := range x.Points {
		c := &x.Points[i]
		e.i64(c.In)
		e.i64(c.Out)
		e.bool(c.Member)
		e.i64(c.MemberOut)
		e.u32(c.Sum)
		e.u32(uint32(c.WindowLen))
		e.u8(c.Unit)
		e.u32(uint32(len(c.Sums)))
		e.u32s(c.Sums)
		n := c.WindowBytes()
		e.u32(uint32(n))
		var sum [sha256.Size]byte
		if n > 0 {
			sum = c.WindowSum()
			e.blob(n, c.DeflatedWindow)
		}
		e.b = append(e.b, sum[:]...)
	}
}

// minCheckpoint is the fewest bytes a checkpoint takes in a saved table's
// body.
const minCheckpoint = tfrecord.PointSize

// seek reads what encoder.seek wrote; the structure is checked later
// (tfrecord.SeekIndex.Check), each window when it is read.
func (d *decoder) seek(c tfrecord.Compression) *tfrecord.SeekIndex {
	x := &tfrecord.SeekIndex{Comp: c}
	n := d.count(minCheckpoint)
	x.Points = make([]tfrecord.Checkpoint, 0, n)
	for range n {
		cp := tfrecord.Checkpoint{In: d.i64(), Out: d.i64(), Member: d.bool(), MemberOut: d.i64(),
			Sum: d.u32(), WindowLen: int(d.u32()), Unit: d.u8()}
		cp.Sums = d.u32s(int64(d.count(4)))
		wl := int(d.u32())
		sum := d.bytes(sha256.Size)
		if wl > 0 && d.err == nil {
			w := &tfrecord.StoredWindow{Len: wl}
			w.R, w.Off = d.blobPiece(wl)
			copy(w.Sum[:], sum)
			cp.Stored = w
		}
		if d.err != nil {
			return x
		}
		x.Points = append(x.Points, cp)
	}
	return x
}

// proveCompressed proves the table of a compressed file, loaded from a
// saved table, in one pass of its own over the file
// (tfrecord.IndexCompressed from the start, trusting none of the saved
// checkpoints): the records the pass finds are compared with the table's
// as they come, and when every one holds the table takes the pass's
// checkpoints in place of the saved ones, so that no record is ever read
// through a checkpoint only the saved table vouched for. The whole pass
// runs at the first proof; the scan returned replays its outcome.
func (t *tfrTable) proveCompressed(src io.ReaderAt, s *snapshot, o Options) provingScan {
	p := &passProof{}
	xo := tfrecord.IndexOptions{Strict: o.Strict, Cache: decodedCache()}
	res, err := tfrecord.IndexCompressed(context.Background(), src, s.size, t.comp, xo, func(rec tfrecord.Record) bool {
		if p.held < s.n && t.get(p.held) == rec {
			p.held++
			return true
		}
		p.stray, p.strayAt = true, rec.Off
		return false
	})
	switch {
	case err != nil:
		p.fail = err
	case p.stray:
	case res.Index.Size != t.dsize:
		p.fail = fmt.Errorf("%w: the stream decompresses to %d bytes, the table says %d", errLie, res.Index.Size, t.dsize)
	case p.held == s.n:
		t.mu.Lock()
		t.seek, t.inf, t.infSrc = res.Index, nil, nil
		t.mu.Unlock()
		t.passed = sameDamage(res.Damage, s.damage)
	}
	return p
}

// sameDamage reports whether two lists of damage name the same ranges.
func sameDamage(a, b []codec.Damage) bool {
	return slices.EqualFunc(a, b, func(x, y codec.Damage) bool { return x.Off == y.Off && x.Len == y.Len })
}

// provenWhole reports whether a pass over the file found the table true
// in every record and every damaged range, so that it may be sealed.
func (t *tfrTable) provenWhole() bool { return t.passed }

// passProof is the provingScan of a finished pass over a compressed file:
// it yields the records that held, then the stray one (a record found
// where the table has another, or none) if any, then ends with the pass's
// error.
type passProof struct {
	held    int64 // records found as the table says, from the first
	stray   bool  // the pass found a record the table does not have there
	strayAt int64 // its offset in the stream
	fail    error
	yielded int64
}

func (p *passProof) next() bool {
	if p.yielded < p.held || p.yielded == p.held && p.stray {
		p.yielded++
		return true
	}
	return false
}

func (p *passProof) is(k int64) bool { return k < p.held && k == p.yielded-1 }
func (p *passProof) at() int64       { return p.strayAt } // asked only of the stray record
func (p *passProof) err() error      { return p.fail }
func (p *passProof) close()          {}

// vouch marks a table loaded from a sealed cache file. Only a compressed
// file's table takes it: the proof of a plain file's table is a scan at
// the speed of its bytes, which is kept.
func (t *tfrTable) vouch() { t.sealed = t.comp != tfrecord.None }

// vouched reports whether a seal vouches for t: its records are then
// served without a pass over the file, each span checked against its unit
// checksums as it is decompressed.
func (t *tfrTable) vouched() bool { return t.sealed }
