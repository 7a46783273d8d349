package tfrecord

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"sort"
	"sync"

	"github.com/klauspost/compress/flate"

	"github.com/recfs/recfs/codec"
)

// IndexOptions configure IndexCompressed.
type IndexOptions struct {
	// Strict ends the pass at the first damage with a *codec.CorruptError
	// (a stream cut short is damage only where it cuts a record).
	Strict bool
	// Stream, when set, is a sequential reader of the file from its start;
	// the pass reads the file through it rather than through ReadAt (one
	// request for an object in a store). ReadAt is still used where the
	// pass must look back: damage, and records it must scan again.
	Stream io.Reader
	// From and Resume continue an earlier pass over a file that has grown
	// since (a shard still being written): decompression restarts at the
	// last of From's checkpoints at or before Resume, the end of the last
	// record that pass found, and records are looked for from Resume on.
	From   *SeekIndex
	Resume int64
	// Progress, when set, is called with the compressed bytes read so far.
	Progress func(done int64)
	// Cache is where the decompressed bytes of a stream that must be read
	// again are kept (see InflatedOptions).
	Cache SpanCache
	// Spacing is the least number of decompressed bytes between
	// checkpoints (MinSpacing if 0; see there).
	Spacing int64
}

// IndexResult is what IndexCompressed found.
type IndexResult struct {
	Index *SeekIndex
	// Damage is the damage found, in stream order: records that did not
	// check, and places where the compressed stream is damaged or cut
	// short (Len 0: the decompressed bytes there are unknown).
	Damage []codec.Damage
	// Info describes the records found from Resume on (see Scanner).
	Info Info
}

// validateLen is how much output a candidate checkpoint must reproduce
// (its sparse window then reproduces all the output it can reach).
const validateLen = 16 << 10

// IndexCompressed reads the GZIP- or ZLIB-compressed TFRecord file r (size
// bytes) once, in order: it decompresses it, calls rec with every intact
// record of the decompressed stream (as a Scanner would find them; rec
// returns false to stop early) and records checkpoints (see Checkpoint) from
// which an Inflated reads any part of the stream later. Damage does not end
// the pass: records before and after it are kept, and a damaged GZIP
// member is skipped to the next member that decompresses. The pass stops
// with ctx's error when ctx is done, within one 32 KiB chunk of output.
func IndexCompressed(ctx context.Context, r io.ReaderAt, size int64, c Compression, o IndexOptions, rec func(Record) bool) (IndexResult, error) {
	if c != Gzip && c != Zlib {
		return IndexResult{}, fmt.Errorf("%w: compression %v", codec.ErrUnsupported, c)
	}
	if o.Spacing <= 0 {
		o.Spacing = MinSpacing
	}
	p := &pass{ctx: ctx, o: o, x: &SeekIndex{Comp: c}, d: newZDecoder(r, size, c)}
	p.d.build, p.d.done, p.d.tap.on = true, ctx.Done(), true
	if m, ok := r.(codec.ByteSlicer); ok && o.Stream == nil {
		if b, err := m.Slice(0, size); err == nil && int64(len(b)) == size {
			p.d.whole = b // a mapping: decompressed without a copy
		}
	}
	p.trialBR = bufio.NewReaderSize(nil, 4096)
	p.trialFR = flate.NewReaderOpts(nil)
	p.packer.start()
	defer p.packer.stop()
	start, err := p.begin(r, size)
	if err != nil {
		return IndexResult{}, p.ctxErr(err)
	}
	p.ch = newChain(start, rec)
	if err := p.run(); err != nil {
		return IndexResult{}, p.ctxErr(err)
	}
	p.packer.finish(p.x)
	res := IndexResult{Index: p.x, Damage: p.d.damage}
	res.Info = Info{First: p.ch.from, LastEnd: p.ch.last, Records: p.ch.recs, Next: p.x.Size}
	if o.Strict {
		for _, d := range p.d.damage {
			if errors.Is(d.Err, codec.ErrCorrupt) {
				return IndexResult{}, d.AsError(codec.TFRecord)
			}
		}
	}
	if p.ch.whole() || p.ch.stop {
		return res, nil
	}
	// A record did not check, or the stream ends inside one: scan on from
	// it with random access through the checkpoints just made.
	in, err := NewInflated(r, size, p.x, InflatedOptions{Cache: o.Cache, Done: ctx.Done()})
	if err != nil {
		return IndexResult{}, err
	}
	if err := p.rescan(in, &res, rec); err != nil {
		return IndexResult{}, p.ctxErr(err)
	}
	sort.SliceStable(res.Damage, func(i, j int) bool { return res.Damage[i].Off < res.Damage[j].Off })
	return res, nil
}

// rescan scans the stream with a Scanner from where the chain stopped. The
// places where bytes of the stream are missing (a damaged member skipped)
// split the scan: a record cannot run across one, and the scan resumes
// after it at the first record the resync rule accepts.
func (p *pass) rescan(in *Inflated, res *IndexResult, rec func(Record) bool) error {
	start, aligned := p.ch.pos, true
	ends := append(slices.Clone(p.d.gaps), p.x.Size)
	for _, end := range ends {
		if end <= start {
			continue
		}
		sc := NewScanner(in, end, Options{Strict: p.o.Strict, Start: start, Aligned: aligned})
		stop := false
		for !stop && sc.Next() {
			stop = !rec(sc.Record())
		}
		if err := sc.Err(); err != nil {
			return err
		}
		si := sc.Info()
		if first := si.First; !aligned && first != start {
			if first < 0 {
				first = end
			}
			res.Damage = append(res.Damage, codec.Damage{Off: start, Len: first - start, Kind: codec.DamageOther,
				Reason: "bytes after a gap in the compressed stream, before the first record", Err: codec.ErrCorrupt})
		}
		res.Info.Records += si.Records
		if si.Records > 0 {
			res.Info.LastEnd = si.LastEnd
			if res.Info.First < 0 {
				res.Info.First = si.First
			}
		}
		res.Damage = append(res.Damage, sc.Damage()...)
		if stop {
			break
		}
		start, aligned = end, false
	}
	return nil
}

// pass is the state of IndexCompressed.
type pass struct {
	ctx context.Context
	o   IndexOptions
	x   *SeekIndex
	d   *zdecoder
	ch  *chain

	recent []byte // a ring of the latest output, ending at d.out

	ucrc  uint32 // CRC-32C of the current unit of the current span so far
	ufill int64  // its bytes
	cost  int64  // estimated saved size of the last checkpoint

	cand *candidate
	// seen counts, by how many bits the decoder had read past a block's
	// end, the checkpoints found: the likeliest lookaheads are tried first.
	seen    [maxLookahead]int
	trialBR *bufio.Reader
	trialFR io.ReadCloser
	got     []byte
	packer  packer
}

// candidate is a block end the pass would make a checkpoint once it knows
// the boundary's exact bit.
type candidate struct {
	cp     Checkpoint // In unknown yet
	bits   int64      // compressed bits consumed at the block's end
	window []byte
	// The current span's units at the candidate, to end the span there.
	nsums int
	ucrc  uint32
	ufill int64
}

// begin positions the decoder: at the start of the file, or for a grown
// file at From's last checkpoint at or before Resume. It returns where
// records are to be looked for.
func (p *pass) begin(r io.ReaderAt, size int64) (int64, error) {
	first := Checkpoint{Member: true, Sum: initialSum(p.x.Comp), Unit: unitMin}
	if f := p.o.From; f != nil && f.Comp == p.x.Comp && len(f.Points) > 0 && p.o.Resume > 0 {
		i := max(f.span(min(p.o.Resume, f.Size)), 0)
		p.x.Points = append([]Checkpoint(nil), f.Points[:i+1]...) // f is in use: copied
		cp := &p.x.Points[i]
		cp.Sums = nil
		var win []byte
		if !cp.Member {
			var err error
			if win, err = unpackWindow(cp, make([]byte, windowSize), flate.NewReader(nil)); err != nil {
				if re := (*WindowReadError)(nil); errors.As(err, &re) || errors.Is(err, ErrStoredWindow) {
					return 0, err
				}
				return 0, corrupt(cp.Out, err.Error(), codec.ErrCorrupt)
			}
		}
		p.d.floor = cp.In/8 + 1
		p.cost = cp.EncodedSize()
		if err := p.d.start(cp, win, nil); err != nil {
			return 0, err
		}
		p.keep(win, cp.Out-int64(len(win)))
		return p.o.Resume, nil
	}
	p.x.Points = append(p.x.Points, first)
	p.cost = first.EncodedSize()
	p.d.floor = 1
	if err := p.d.start(&first, nil, p.o.Stream); err != nil {
		return 0, err
	}
	if p.d.ev.kind == evMember {
		p.atMember(p.d.ev) // the first member after bytes that are none
	}
	return 0, nil
}

// run decompresses to the end of the stream.
func (p *pass) run() error {
	d := p.d
	for {
		if err := p.ctx.Err(); err != nil {
			return err
		}
		b, err := d.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		off := d.out - int64(len(b))
		p.units(b)
		p.keep(b, off)
		if !p.ch.stop {
			p.ch.feed(off, b)
		}
		if p.o.Progress != nil {
			p.o.Progress(d.consumedBits() / 8)
		}
		switch d.ev.kind {
		case evMember:
			p.atMember(d.ev)
		case evBlock:
			p.atBlock(d.ev)
		}
		if p.cand != nil && d.out >= p.cand.cp.Out+reach+1024 {
			p.validate()
		}
		if p.ch.stop {
			break
		}
	}
	p.cand = nil
	if p.ufill > 0 {
		cp := p.last()
		cp.Sums = append(cp.Sums, p.ucrc)
	}
	p.x.Size = d.out
	return nil
}

// ctxErr prefers the context's error to what the pass stopped with.
func (p *pass) ctxErr(err error) error {
	if cerr := p.ctx.Err(); cerr != nil {
		return cerr
	}
	return err
}

func (p *pass) last() *Checkpoint { return &p.x.Points[len(p.x.Points)-1] }

// units extends the unit checksums of the current span with b.
func (p *pass) units(b []byte) {
	cp := p.last()
	size := int64(1) << cp.Unit
	for len(b) > 0 {
		k := min(int64(len(b)), size-p.ufill)
		p.ucrc = crc32cUpdate(p.ucrc, b[:k])
		p.ufill += k
		b = b[k:]
		if p.ufill == size {
			cp.Sums = append(cp.Sums, p.ucrc)
			p.ucrc, p.ufill = 0, 0
		}
	}
}

// recentSize is how much output the pass keeps: a window before a
// candidate and what follows it until it is validated.
const recentSize = 4 * windowSize

// keep adds b, the output at off, to the recent output.
func (p *pass) keep(b []byte, off int64) {
	if p.recent == nil {
		p.recent = make([]byte, recentSize)
	}
	if len(b) > recentSize {
		off += int64(len(b) - recentSize)
		b = b[len(b)-recentSize:]
	}
	at := int(off % recentSize)
	k := copy(p.recent[at:], b)
	copy(p.recent, b[k:])
}

// recentOut returns a copy of the output [from, to), which must be
// within the recent output.
func (p *pass) recentOut(from, to int64) []byte {
	out := make([]byte, to-from)
	at := int(from % recentSize)
	k := copy(out, p.recent[at:])
	copy(out[k:], p.recent)
	return out
}

// due reports whether a checkpoint at compressed bit in, decompressed
// offset out would be far enough from the last one (see MinSpacing).
func (p *pass) due(in, out int64) bool {
	l := p.last()
	return out-l.Out >= p.o.Spacing && (in-l.In)/8 >= checkpointCost*p.lastCost()*p.o.Spacing/MinSpacing
}

// atMember makes a member start a checkpoint when one is due there (a
// member start needs no window), and always after damage.
func (p *pass) atMember(ev event) {
	if !ev.gap && !p.due(ev.bits, ev.out) {
		return
	}
	p.drop()
	p.endSpan(len(p.last().Sums), p.ucrc, p.ufill)
	cp := Checkpoint{In: ev.bits, Out: ev.out, Member: true, MemberOut: ev.out, Sum: initialSum(p.x.Comp)}
	p.add(cp, nil)
}

// atBlock makes a block end a candidate checkpoint when one is due.
func (p *pass) atBlock(ev event) {
	if p.cand != nil || !p.due(ev.bits, ev.out) {
		return
	}
	d := p.d
	cp := Checkpoint{Out: ev.out, MemberOut: d.mOut, Sum: d.mSum, WindowLen: int(min(windowSize, ev.out-d.mOut))}
	if cp.WindowLen == 0 {
		return
	}
	p.cand = &candidate{cp: cp, bits: ev.bits, window: p.recentOut(ev.out-int64(cp.WindowLen), ev.out),
		nsums: len(p.last().Sums), ucrc: p.ucrc, ufill: p.ufill}
}

// drop forgets the candidate.
func (p *pass) drop() { p.cand = nil }

// validate finds the bit where the candidate's block boundary is: the one
// from which decoding, with the candidate's window, reproduces the output
// that followed. Without one (or when the bytes needed are no longer
// kept) the candidate is dropped and the next block end is tried.
func (p *pass) validate() {
	c := p.cand
	defer p.drop()
	lo := max((c.bits-maxLookahead)/8, p.last().In/8+1)
	data := p.d.kept(lo)
	if data == nil {
		return
	}
	want := p.recentOut(c.cp.Out, c.cp.Out+reach)
	if cap(p.got) < validateLen {
		p.got = make([]byte, validateLen)
	}
	got := p.got[:validateLen]
	for _, nb := range p.lookaheads() {
		in := c.bits - int64(nb)
		if in < 8*lo {
			continue
		}
		p.trialBR.Reset(readerAt(data, in-8*lo))
		p.trialFR.(flate.Resetter).Reset(p.trialBR, c.window)
		if n, _ := io.ReadFull(p.trialFR, got); n == len(got) && bytes.Equal(got, want[:validateLen]) {
			p.seen[nb]++
			p.accept(in, packJob{data: data, bit: in - 8*lo, want: want})
			return
		}
	}
}

// lookaheads returns the lookaheads to try, likeliest first.
func (p *pass) lookaheads() []int {
	order := make([]int, maxLookahead)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return p.seen[order[i]] > p.seen[order[j]] })
	return order
}

// accept makes the candidate, whose block starts at bit in, a checkpoint;
// j holds what its window's job needs but the window.
func (p *pass) accept(in int64, j packJob) {
	c := p.cand
	p.endSpan(c.nsums, c.ucrc, c.ufill)
	cp := c.cp
	cp.In = in
	j.window = c.window
	p.add(cp, &j)
}

// endSpan ends the current span where it had nsums full units and a
// partial one of ufill bytes with checksum ucrc.
func (p *pass) endSpan(nsums int, ucrc uint32, ufill int64) {
	l := p.last()
	l.Sums = l.Sums[:nsums]
	if ufill > 0 {
		l.Sums = append(l.Sums, ucrc)
	}
}

// add appends checkpoint cp, with the job that makes its window (nil at a
// member header); the output from cp.Out on is in p.recent.
func (p *pass) add(cp Checkpoint, j *packJob) {
	l := p.last()
	cp.Unit = unitFor(cp.Out-l.Out, (cp.In-l.In)/8)
	p.x.Points = append(p.x.Points, cp)
	p.ucrc, p.ufill = 0, 0
	if cp.Out < p.d.out {
		p.units(p.recentOut(cp.Out, p.d.out))
	}
	p.d.floor = cp.In/8 + 1
	p.cost = -1 // known once the window is made
	if j != nil {
		j.i = len(p.x.Points) - 1
		p.packer.add(*j)
	}
}

// lastCost returns the saved size of the last checkpoint, waiting for its
// window if another goroutine is still making it: where checkpoints fall
// then does not depend on timing.
func (p *pass) lastCost() int64 {
	if p.cost < 0 {
		i := len(p.x.Points) - 1
		p.cost = PointSize + 4*unitCount(p.o.Spacing, p.x.Points[i].Unit)
		if !p.x.Points[i].Member {
			p.cost += p.packer.size(i)
		}
	}
	return p.cost
}

// unitFor returns the verification unit (log2) for a span after one of
// out decompressed bytes from in compressed bytes: the smallest from 16
// KiB up whose checksum costs at most 1/400 of the unit's compressed size.
func unitFor(out, in int64) uint8 {
	ratio := max(out/max(in, 1), 1)
	u := uint8(bits.Len64(uint64(1600*ratio - 1)))
	return min(max(u, unitMin), unitMax)
}

// packer makes checkpoint windows on another goroutine: sparse (see
// sparse.go), then deflated.
type packer struct {
	jobs chan packJob
	wg   sync.WaitGroup
	mu   sync.Mutex
	done *sync.Cond
	out  map[int][]byte
}

// packJob is one window to make: checkpoint i's window, and what decodes
// the output after it: bit of data, giving want.
type packJob struct {
	i      int
	window []byte
	data   []byte
	bit    int64
	want   []byte
}

func (k *packer) start() {
	jobs := make(chan packJob, 16)
	k.jobs = jobs
	k.out = map[int][]byte{}
	k.done = sync.NewCond(&k.mu)
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		sp := newSparser()
		for j := range jobs {
			w := sp.sparse(func() io.Reader { return readerAt(j.data, j.bit) }, j.window, j.want)
			b := packWindow(w)
			k.mu.Lock()
			k.out[j.i] = b
			k.done.Broadcast()
			k.mu.Unlock()
		}
	}()
}

func (k *packer) add(j packJob) { k.jobs <- j }

// size returns the deflated size of checkpoint i's window, waiting until
// it is made; i must have had a job.
func (k *packer) size(i int) int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	for {
		if b, ok := k.out[i]; ok {
			return int64(len(b))
		}
		k.done.Wait()
	}
}

// stop ends the goroutine (idempotent).
func (k *packer) stop() {
	if k.jobs != nil {
		close(k.jobs)
		k.jobs = nil
	}
	k.wg.Wait()
}

// finish waits for every window and stores them in x.
func (k *packer) finish(x *SeekIndex) {
	k.stop()
	for i, b := range k.out {
		x.Points[i].Window = b
	}
}
