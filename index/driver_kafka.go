package index

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/kafka"
	"github.com/recfs/recfs/codec/recordio"
)

// kafkaDriver is the driver of Kafka log segments (codec/kafka), which
// recfs only reads. A record's payload is its value (a null value reads as
// empty); its Kafka offset is its sequence number (Seq, SeqRecords), and
// its offset, timestamp, key and headers are its metadata (RecordMeta).
// Control records (transaction markers) are not records of the table:
// their batches are kept for offsets and counted in the segment's facts. A
// grown segment (a broker's active segment) is taken in by scanning only
// what follows its last intact batch.
type kafkaDriver struct{}

func (kafkaDriver) probe(r io.ReaderAt, size int64, head []byte) (bool, error) {
	return kafka.Probe(r, size), nil
}

func (kafkaDriver) readOnly() string {
	return "Kafka log segments are written by their broker, whose offsets, indexes and replicas would not know of records added behind its back"
}

func (kafkaDriver) tried(head []byte) string {
	return "kafka (no record batch or message whose checksum verifies at offset 0)"
}

func (kafkaDriver) build(ctx context.Context, r io.ReaderAt, size int64, f codec.Format, o Options) (*snapshot, error) {
	prog := progress{fn: o.Progress, total: size}
	cache := recordio.DefaultBlockCache()
	owner := cache.NewOwner()
	// The scanners check every batch's checksum, so they read the file
	// by pread into their windows rather than through a map (see
	// unmapped): the map's page faults cost more than the copy.
	pr := unmapped(ctx, r)
	parts, res, err := scanParts(ctx, buildSplit(size, o, kafkaPartsPerWorker),
		func(sp codec.Split, scan kafka.PartScan) (kafka.ParallelResult, error) {
			return kafka.ScanParallel(ctx, pr, size, kafka.Options{Strict: o.Strict}, sp, scan)
		},
		func(sc *kafka.Scanner, start, end int64, done *atomic.Int64) (*kafkaPart, error) {
			p := &kafkaPart{t: kafkaTable{prev: -1}}
			p.t.recs.reserve((end - start) / kafkaReserveBytes)
			pp := &partProgress{ctx: ctx, done: done, prog: prog, last: start}
			var keep func(int64, []byte)
			if start == 0 {
				// What a reader in file order reads first: the batches
				// of the first part, up to kafkaKeepBytes of them.
				left := kafkaKeepBytes
				keep = func(off int64, data []byte) {
					if left -= int64(len(data)); left >= 0 {
						cache.Offer(owner, off, data)
					}
				}
			}
			if err := p.t.scan(sc, &p.s, pp, keep); err != nil {
				return nil, err
			}
			pp.finish(sc.Info().Next)
			return p, nil
		})
	if err != nil {
		return nil, err
	}
	kt := &kafkaTable{prev: -1, found: res.Info, resume: res.Info.LastEnd}
	kt.owner.Store(owner)
	if res.Info.Prev >= 0 {
		kt.prev = res.Info.Prev
	}
	s := &snapshot{format: codec.Kafka, tab: kt, size: size, damage: res.Damage}
	for _, p := range parts[:res.Parts] {
		for _, b := range p.t.batches {
			b.first += s.n
			kt.batches = append(kt.batches, b)
		}
		kt.recs.join(&p.t.recs)
		s.n += p.s.n
		s.bytes += p.s.bytes
	}
	s.flavor = kt.flavor()
	prog.report(size)
	return s, nil
}

// kafkaPartsPerWorker is how many parts a parallel build of a segment
// gives each worker: when another process takes a worker's core for a
// while, the other workers take the parts it has not reached rather than
// wait for it at the end.
const kafkaPartsPerWorker = 4

// kafkaKeepBytes bounds the decompressed batches a build offers to the
// decoded-data cache: enough for the first reads in file order (a cat, a
// grep over a mount), little beside the decompression for a build that is
// not followed by reads. A variable for tests.
var kafkaKeepBytes int64 = 32 << 20

// kafkaReserveBytes is the file bytes per record a part of a build
// reserves room for before its first batch (at most a chunk of records):
// a large segment's records then fill chunks that never grow by doubling.
const kafkaReserveBytes = 64

// kafkaPart is what the scan of one part of a segment found.
type kafkaPart struct {
	t kafkaTable
	s snapshot // its record count and payload bytes
}

func (kafkaDriver) decode(d *decoder, f codec.Format, n int64) table {
	t := &kafkaTable{}
	d.kafka(t, n)
	return t
}

// kafkaTable stores a segment's batches and, for each record of a data
// batch, a kRec: 12 bytes a record and one kBatch per batch.
type kafkaTable struct {
	batches []kBatch
	recs    parted[kRec] // one per record, in chunks joined per part of the build
	found   kafka.Info   // what the scans found: batches, offsets, producers, ...
	resume  int64        // end of the last intact batch: where a grown segment is scanned from
	prev    int64        // the last offset in order before resume (-1: none)

	owner    atomic.Uint64 // key space in the decoded-data cache (0 until first used)
	mu       sync.Mutex
	inflight map[int]*batchLoad // batches being read, so that concurrent readers share one read
	verified sync.Map           // int → true: large uncompressed batches whose checksum a read verified
	sorted   sync.Once
	rising   bool // offsets rise from record to record (set by sorted)
}

// kRec is what a kafkaTable keeps of a record of a data batch.
type kRec struct {
	pos   uint32 // record position in its batch's data
	vlen  uint32 // value length (a null value: 0)
	delta uint32 // Kafka offset minus the batch's base offset
}

// kBatch is one batch of a kafkaTable.
type kBatch struct {
	off    int64 // file offset
	n      int64 // bytes in the file
	first  int64 // number of its first record in the table
	base   int64 // Kafka offset that the records' deltas count from
	last   int64 // Kafka offset of its last record
	baseTS int64 // base timestamp (v2), the wrapper's (v1), -1 (v0)
	maxTS  int64
	dlen   uint32 // length of its data (decompressed records, or the uncompressed batch from its data offset)
	attr   int16
	magic  int8
}

// batch returns b as codec/kafka describes it.
func (b kBatch) batch() kafka.Batch {
	return kafka.Batch{Off: b.off, Len: b.n, Magic: b.magic, Attr: b.attr, BaseOffset: b.base, LastOffset: b.last,
		BaseTimestamp: b.baseTS, MaxTimestamp: b.maxTS}
}

// scan adds the records sc yields to t and s, a run at a time (see
// kafka.Scanner.NextRun), keeping control batches without their records,
// and reports progress through pp. It hands keep the decompressed data of
// each compressed batch (the scanner's bytes, valid during the call),
// which the readers of the table would otherwise decompress again; keep
// may be nil.
func (t *kafkaTable) scan(sc *kafka.Scanner, s *snapshot, pp *partProgress, keep func(off int64, data []byte)) (err error) {
	defer recoverFault(guardFault(), &err)
	at := int64(-1)
	for sc.NextRun() {
		b, run := sc.Run()
		if b.Off != at {
			at = b.Off
			t.batches = append(t.batches, kBatch{off: b.Off, n: b.Len, first: s.n, base: b.BaseOffset, last: b.LastOffset,
				baseTS: b.BaseTimestamp, maxTS: b.MaxTimestamp, attr: b.Attr, magic: b.Magic})
			if !pp.step(b.Off) {
				break
			}
			if d := sc.Decompressed(); d != nil && keep != nil {
				keep(b.Off, d)
			}
		}
		kb := &t.batches[len(t.batches)-1]
		end := int64(kb.dlen)
		if !b.Compressed() && b.Magic == 2 {
			end = b.End() - b.DataOff()
		} else {
			for i := range run {
				end = max(end, run[i].Pos+run[i].Len)
			}
		}
		kb.dlen = uint32(end)
		if b.Control() {
			continue
		}
		base, bytes := b.BaseOffset, int64(0)
		for len(run) > 0 {
			dst := t.recs.extend(len(run))
			for i := range dst {
				rec := &run[i]
				vlen := max(rec.ValueLen, 0)
				dst[i] = kRec{pos: uint32(rec.Pos), vlen: uint32(vlen), delta: uint32(rec.Offset - base)}
				bytes += vlen
			}
			s.n += int64(len(dst))
			run = run[len(dst):]
		}
		s.bytes += bytes
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return canceled(pp.ctx)
}

// flavor names the segment's message formats and codecs for people.
func (t *kafkaTable) flavor() string {
	f := &t.found
	var vs, cs []string
	for m, n := range f.Magic {
		if n > 0 {
			vs = append(vs, fmt.Sprintf("v%d", m))
		}
	}
	for c, n := range f.Codecs {
		if n > 0 {
			cs = append(cs, kafka.Compression(c).String())
		}
	}
	if len(vs) == 0 {
		return "Kafka log segment (no batches)"
	}
	return fmt.Sprintf("Kafka log segment (%s; %s)", strings.Join(vs, "+"), strings.Join(cs, "+"))
}

// facts says what the segment holds beyond its records, for info and
// .recfs.
func (t *kafkaTable) facts() []Fact {
	f := &t.found
	stamp := func(ms int64) any {
		if ms < 0 {
			return "none"
		}
		return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
	}
	var codecs, formats []string
	for c, n := range f.Codecs {
		if n > 0 {
			codecs = append(codecs, fmt.Sprintf("%v %d", kafka.Compression(c), n))
		}
	}
	for m, n := range f.Magic {
		if n > 0 {
			formats = append(formats, fmt.Sprintf("v%d %d", m, n))
		}
	}
	producers := any(int64(len(f.Producers)))
	if f.MoreProducers {
		producers = fmt.Sprintf("more than %d", len(f.Producers))
	}
	out := []Fact{
		{"batches", f.Batches},
		{"message formats", strings.Join(formats, ", ")},
		{"compression", strings.Join(codecs, ", ")},
		{"first offset", f.FirstOffset},
		{"last offset", f.LastOffset},
		{"first timestamp", stamp(f.FirstTimestamp)},
		{"last timestamp", stamp(f.LastTimestamp)},
		{"max timestamp", stamp(f.MaxTimestamp)},
		{"producers", producers},
		{"producer ids", f.ProducerIDs()},
		{"transactional batches", f.TransactionalBatches},
		{"control batches", f.ControlBatches},
		{"commit markers", f.Commits},
		{"abort markers", f.Aborts},
	}
	if f.OutOfOrder > 0 {
		out = append(out, Fact{"batches out of offset order", f.OutOfOrder})
	}
	return out
}

// batchOf returns the index of the batch holding record k.
func (t *kafkaTable) batchOf(k int64) int {
	return sort.Search(len(t.batches), func(i int) bool { return t.batches[i].first > k }) - 1
}

func (t *kafkaTable) size(k int64) int64 { return int64(t.recs.at(k).vlen) }

func (t *kafkaTable) offset(k int64) int64 { return t.batches[t.batchOf(k)].off }

// kafkaMaxCached returns the largest batch data the cache keeps (a
// variable for tests).
var kafkaMaxCached = func() int64 { return recordio.DefaultBlockCache().MaxEntry() }

// kafkaBatchReads counts the batches read (verified and decompressed) from
// a source, for tests.
var kafkaBatchReads atomic.Int64

// kafkaRecord is one record of a kafkaTable, parsed from its batch's data.
type kafkaRecord struct {
	b    kBatch
	rec  kafka.Record // positions in data; Offset and Timestamp as the record's own fields
	data []byte       // the batch's data; nil for a large batch read in place
	src  io.ReaderAt
}

// record parses record k from its batch's data: held in the process's
// decoded-data cache (recordio.DefaultBlockCache, one budget for every
// format) once read, verified and decompressed, so that the reads of a
// batch's records that follow each other cost one read of the batch; an
// uncompressed batch larger than the cache keeps is verified once and
// read in place.
func (t *kafkaTable) record(tb *Table, s *snapshot, k int64) (kafkaRecord, error) {
	bi := t.batchOf(k)
	b := t.batches[bi]
	kr := t.recs.at(k)
	r := kafkaRecord{b: b, src: tb.src(s)}
	var err error
	if b.attr&0x07 == 0 && int64(b.dlen) > kafkaMaxCached() {
		if _, ok := t.verified.Load(bi); !ok {
			if err := kafka.VerifyBatch(r.src, b.off, b.n); err != nil {
				return r, err
			}
			t.verified.Store(bi, true)
		}
		r.rec, err = kafka.ParseRecordAt(r.src, b.batch().DataOff(), int64(b.dlen), int64(kr.pos), b.magic)
	} else {
		if r.data, err = t.batchData(r.src, bi, recordio.DefaultBlockCache()); err != nil {
			return r, err
		}
		r.rec, err = kafka.ParseRecord(r.data, int64(kr.pos), b.magic)
	}
	if err == nil && max(r.rec.ValueLen, 0) != int64(kr.vlen) {
		err = &codec.CorruptError{Format: codec.Kafka, Off: b.off, Err: codec.ErrCorrupt,
			Reason: fmt.Sprintf("record %d: value of %d bytes, the table says %d", k, r.rec.ValueLen, kr.vlen)}
	}
	return r, err
}

// part reads [off, off+n) of the record's data into a new slice (nil for
// n < 0): from memory, or from the file for a batch read in place.
func (r kafkaRecord) part(off, n int64) ([]byte, error) {
	if n < 0 {
		return nil, nil
	}
	if r.data != nil {
		return r.data[off : off+n], nil
	}
	if n > maxMetaRead {
		return nil, fmt.Errorf("%w: %d bytes of a record's key or headers", codec.ErrLimit, n)
	}
	p := make([]byte, n)
	if k, err := r.src.ReadAt(p, r.b.batch().DataOff()+off); k < len(p) {
		return nil, shortRead(r.b, err)
	}
	return p, nil
}

// maxMetaRead bounds the key or headers of a record of a batch read in
// place that RecordMeta reads.
const maxMetaRead = 16 << 20

// shortRead is the error of a read of batch b that came back short.
func shortRead(b kBatch, err error) error {
	if err == nil || err == io.EOF {
		err = fmt.Errorf("%w: batch at %d ends early", codec.ErrTruncated, b.off)
	}
	return err
}

// readAt reads record k's value.
func (t *kafkaTable) readAt(tb *Table, s *snapshot, k int64, p []byte, off int64) (int, error) {
	r, err := t.record(tb, s, k)
	if err != nil {
		return 0, err
	}
	want, ok, err := codec.ClipRead(p, off, max(r.rec.ValueLen, 0))
	if !ok {
		return 0, err
	}
	if r.data != nil {
		return copy(want, r.data[r.rec.ValueOff+off:]), nil
	}
	n, err := r.src.ReadAt(want, r.b.batch().DataOff()+r.rec.ValueOff+off)
	if n == len(want) {
		return n, nil
	}
	return n, shortRead(r.b, err)
}

// meta fills m with record k's offset, timestamp, key and headers, and
// its bytes as Frame (the v2 record, or the v0/v1 message; nil for a batch
// read in place).
func (t *kafkaTable) meta(tb *Table, s *snapshot, k int64, m *decode.Meta) error {
	r, err := t.record(tb, s, k)
	if err != nil {
		return err
	}
	b := r.b.batch()
	*m = decode.Meta{Seq: r.b.base + int64(t.recs.at(k).delta), HasSeq: true, HasKey: true}
	if ts := b.RecordTimestamp(r.rec.Timestamp); ts >= 0 {
		m.Time = time.UnixMilli(ts).UTC()
	}
	if m.Key, err = r.part(r.rec.KeyOff, r.rec.KeyLen); err != nil {
		return err
	}
	if r.rec.Headers > 0 {
		hdata := r.data
		if hdata == nil {
			// In place: the headers, read into memory at their positions.
			end := r.rec.Pos + r.rec.Len
			raw, err := r.part(r.rec.HeadersOff, end-r.rec.HeadersOff)
			if err != nil {
				return err
			}
			hdata = make([]byte, r.rec.HeadersOff, end)
			hdata = append(hdata, raw...)
		}
		hs, err := kafka.AppendHeaders(nil, hdata, r.rec)
		if err != nil {
			return err
		}
		m.Headers = make([]decode.Header, len(hs))
		for i, h := range hs {
			m.Headers[i] = decode.Header{Key: string(h.Key), Value: h.Value}
		}
	}
	if r.data != nil {
		m.Frame = r.data[r.rec.Pos : r.rec.Pos+r.rec.Len]
	}
	return nil
}

// seq returns record k's Kafka offset.
func (t *kafkaTable) seq(k int64) int64 {
	return t.batches[t.batchOf(k)].base + int64(t.recs.at(k).delta)
}

// seqSearch returns the first record whose offset is at least seq, when
// offsets rise from record to record (they do but in damaged segments);
// rising false otherwise.
func (t *kafkaTable) seqSearch(seq int64, n int64) (k int64, rising bool) {
	t.sorted.Do(func() {
		t.rising = true
		prev := int64(-1)
		for _, b := range t.batches {
			if b.base <= prev {
				t.rising = false
			}
			prev = b.last
		}
	})
	if !t.rising {
		return 0, false
	}
	bi := sort.Search(len(t.batches), func(i int) bool { return t.batches[i].last >= seq })
	if bi == len(t.batches) {
		return n, true
	}
	b := t.batches[bi]
	end := n
	if bi+1 < len(t.batches) {
		end = t.batches[bi+1].first
	}
	i := sort.Search(int(end-b.first), func(i int) bool { return b.base+int64(t.recs.at(b.first+int64(i)).delta) >= seq })
	return b.first + int64(i), true
}

// batchLoad is one read of a batch's data that concurrent readers share.
type batchLoad struct {
	done chan struct{}
	data []byte
	err  error
}

// batchData returns the verified, decompressed data of batch bi: from the
// cache, or read once however many readers ask at the same time.
func (t *kafkaTable) batchData(src io.ReaderAt, bi int, cache *recordio.BlockCache) ([]byte, error) {
	owner := t.owner.Load()
	if owner == 0 {
		t.owner.CompareAndSwap(0, cache.NewOwner())
		owner = t.owner.Load()
	}
	b := t.batches[bi]
	if data, ok := cache.Get(owner, b.off); ok {
		return data, nil
	}
	t.mu.Lock()
	if l, ok := t.inflight[bi]; ok {
		t.mu.Unlock()
		<-l.done
		return l.data, l.err
	}
	l := &batchLoad{done: make(chan struct{})}
	if t.inflight == nil {
		t.inflight = map[int]*batchLoad{}
	}
	t.inflight[bi] = l
	t.mu.Unlock()
	l.data, l.err = t.load(src, b)
	if l.err == nil {
		cache.Put(owner, b.off, l.data)
	}
	t.mu.Lock()
	delete(t.inflight, bi)
	t.mu.Unlock()
	close(l.done)
	return l.data, l.err
}

// load reads batch b and checks its data against the table.
func (t *kafkaTable) load(src io.ReaderAt, b kBatch) ([]byte, error) {
	kafkaBatchReads.Add(1)
	data, err := kafka.ReadBatch(src, b.off, b.n, nil, kafka.DefaultMaxDecoded)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) < int64(b.dlen) {
		return nil, &codec.CorruptError{Format: codec.Kafka, Off: b.off, Err: codec.ErrCorrupt,
			Reason: fmt.Sprintf("batch data is %d bytes, the table says %d", len(data), b.dlen)}
	}
	return data, nil
}

func (t *kafkaTable) samePrefix(old table, n int64) bool {
	o, ok := old.(*kafkaTable)
	if !ok || n > o.recs.len() || n > t.recs.len() {
		return false
	}
	for i := range n {
		if o.recs.at(i) != t.recs.at(i) || o.batches[o.batchOf(i)] != t.batches[t.batchOf(i)] {
			return false
		}
	}
	return true
}

// canExtend: a grown segment is scanned from the end of its last intact
// batch.
func (t *kafkaTable) canExtend() bool { return true }

// extend scans only what follows the last intact batch of a grown
// segment: batches and damage before it are kept, everything from it on
// (a batch a broker was writing included) is scanned afresh.
func (ot *kafkaTable) extend(ctx context.Context, t *Table, src io.ReaderAt, old *snapshot, size int64) (*snapshot, error) {
	sc := kafka.NewScanner(src, size, kafka.Options{Strict: t.opt.Strict, Start: ot.resume, Prev: ot.prev})
	s := *old
	s.size = size
	kt := &kafkaTable{batches: ot.batches, recs: ot.recs.grown(), resume: ot.resume, prev: ot.prev}
	s.tab = kt
	if err := kt.scan(sc, &s, &partProgress{ctx: ctx, done: new(atomic.Int64)}, nil); err != nil {
		return nil, err
	}
	in := sc.Info()
	kt.found = ot.found.Then(in)
	kt.resume = in.LastEnd
	if in.Prev >= 0 {
		kt.prev = in.Prev
	}
	var dmg []codec.Damage
	for _, d := range old.damage {
		if d.Off < ot.resume {
			dmg = append(dmg, d)
		}
	}
	s.damage = append(dmg, sc.Damage()...)
	s.flavor = kt.flavor()
	s.source = "built"
	return &s, nil
}

func (t *kafkaTable) encode(e *encoder) { e.kafka(t) }

func (e *encoder) kafka(t *kafkaTable) {
	e.i64(t.resume)
	e.i64(t.prev)
	e.u32(uint32(len(t.batches)))
	for _, b := range t.batches {
		for _, v := range []int64{b.off, b.n, b.first, b.base, b.last, b.baseTS, b.maxTS} {
			e.i64(v)
		}
		e.u32(b.dlen)
		e.u32(uint32(uint16(b.attr)))
		e.u8(uint8(b.magic))
	}
	for _, field := range []func(kRec) uint32{kRec.posField, kRec.vlenField, kRec.deltaField} {
		t.recs.each(func(rs []kRec) {
			for _, r := range rs {
				e.u32(field(r))
			}
			e.spill()
		})
	}
	f := &t.found
	for _, p := range kafkaFactFields(f) {
		e.i64(*p)
	}
	e.bool(f.MoreProducers)
	e.u32(uint32(len(f.Producers)))
	for _, p := range f.Producers {
		e.i64(p)
	}
}

// kafkaFactFields lists the numbers of f in their cache order.
func kafkaFactFields(f *kafka.Info) []*int64 {
	out := []*int64{&f.Next, &f.LastEnd, &f.Batches, &f.Records, &f.ControlBatches, &f.ControlRecords, &f.Commits,
		&f.Aborts, &f.TransactionalBatches, &f.OutOfOrder, &f.FirstOffset, &f.LastOffset, &f.FirstTimestamp,
		&f.LastTimestamp, &f.MaxTimestamp}
	for i := range f.Magic {
		out = append(out, &f.Magic[i])
	}
	for i := range f.Codecs {
		out = append(out, &f.Codecs[i])
	}
	return out
}

// kBatchSize is the encoded size of one kBatch.
const kBatchSize = 7*8 + 4 + 4 + 1

func (d *decoder) kafka(t *kafkaTable, n int64) {
	t.resume, t.prev = d.i64(), d.i64()
	nb := d.count(kBatchSize)
	if d.err != nil {
		return
	}
	t.batches = make([]kBatch, nb)
	for i := range t.batches {
		b := &t.batches[i]
		for _, p := range []*int64{&b.off, &b.n, &b.first, &b.base, &b.last, &b.baseTS, &b.maxTS} {
			*p = d.i64()
		}
		b.dlen, b.attr, b.magic = d.u32(), int16(uint16(d.u32())), int8(d.u8())
	}
	if d.err != nil || uint64(n)*12 > uint64(d.remaining()) {
		d.err = errBadCache
		return
	}
	// The cache holds every record's position, then every value
	// length, then every offset delta.
	var k int64
	if !decodeEach(d, n, 4, func(b []byte) { t.recs.add(kRec{pos: binary.LittleEndian.Uint32(b)}) }, func() {}) {
		return
	}
	for _, set := range []func(*kRec, uint32){(*kRec).setVlen, (*kRec).setDelta} {
		k = 0
		if !decodeEach(d, n, 4, func(b []byte) { set(t.recs.ref(k), binary.LittleEndian.Uint32(b)); k++ }, func() {}) {
			return
		}
	}
	f := &t.found
	for _, p := range kafkaFactFields(f) {
		*p = d.i64()
	}
	f.MoreProducers = d.bool()
	np := d.count(8)
	if np > kafka.MaxProducers {
		d.err = errBadCache
		return
	}
	f.Producers = d.i64s(int64(np))
}

// check verifies a decoded table: batches in file order inside the file,
// each record inside its batch's data, record numbers rising and offsets
// rising within each batch.
func (t *kafkaTable) check(s *snapshot) error {
	if t.recs.len() != s.n {
		return fmt.Errorf("%d records, %d entries", s.n, t.recs.len())
	}
	if t.resume < 0 || t.resume > s.size {
		return fmt.Errorf("resume %d outside %d bytes", t.resume, s.size)
	}
	var end, first, total int64
	for i, b := range t.batches {
		next := s.n
		if i+1 < len(t.batches) {
			next = t.batches[i+1].first
		}
		if err := b.check(i, end, first, next, s.size); err != nil {
			return err
		}
		bytes, err := t.checkRecords(i, first, next)
		if err != nil {
			return err
		}
		end, first, total = b.off+b.n, next, total+bytes
	}
	if first != s.n {
		return fmt.Errorf("batches hold %d records, table %d", first, s.n)
	}
	if total != s.bytes {
		return fmt.Errorf("%d payload bytes, table says %d", total, s.bytes)
	}
	return nil
}

// check verifies batch i, which holds records first..next-1 and follows
// a batch ending at end, in a file of size bytes.
func (b kBatch) check(i int, end, first, next, size int64) error {
	switch {
	case b.off < end || b.n <= 0 || b.off+b.n > size || b.off+b.n < b.off:
		return fmt.Errorf("batch %d at %d, %d bytes (previous ends at %d, file %d)", i, b.off, b.n, end, size)
	case b.first != first || next < first || (b.batch().Control() && next != first):
		return fmt.Errorf("batch %d: records from %d, want %d", i, b.first, first)
	case b.base < 0 || b.last < b.base || b.magic < 0 || b.magic > 2 || b.batch().Compression() > kafka.Zstd:
		return fmt.Errorf("batch %d: offsets %d..%d, magic %d, attributes %#x", i, b.base, b.last, b.magic, b.attr)
	}
	return nil
}

// checkRecords verifies records first..next-1 of batch i: each inside
// the batch's data, offset deltas rising within the batch's offsets. It
// returns their payload bytes.
func (t *kafkaTable) checkRecords(i int, first, next int64) (int64, error) {
	b := &t.batches[i]
	prevDelta, total := int64(-1), int64(0)
	for k := first; k < next; k++ {
		r := t.recs.at(k)
		if int64(r.pos)+int64(r.vlen) > int64(b.dlen) || int64(r.delta) <= prevDelta ||
			b.base+int64(r.delta) > b.last {
			return 0, fmt.Errorf("record %d outside batch %d", k, i)
		}
		prevDelta = int64(r.delta)
		total += int64(r.vlen)
	}
	return total, nil
}

// The fields of a kRec, as the cache writes them.
func (r kRec) posField() uint32   { return r.pos }
func (r kRec) vlenField() uint32  { return r.vlen }
func (r kRec) deltaField() uint32 { return r.delta }

func (r *kRec) setVlen(v uint32)  { r.vlen = v }
func (r *kRec) setDelta(v uint32) { r.delta = v }

// The capabilities of Kafka segments: read-only, extended when grown,
// with offsets and metadata.
var (
	_ readOnly  = kafkaDriver{}
	_ extender  = (*kafkaTable)(nil)
	_ metaTable = (*kafkaTable)(nil)
	_ seqTable  = (*kafkaTable)(nil)
	_ factTable = (*kafkaTable)(nil)
)
