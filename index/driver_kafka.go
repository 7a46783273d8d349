package index

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/kafka"
	"github.com/recfs/recfs/codec/recordio"
)

// kafkaDriver is the driver of Kafka log segments (codec/kafka), which
// recfs only reads. A record's payload is its value (a null value reads as
// empty); keys, headers, offsets and timestamps are the record's metadata.
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
	kt := &kafkaTable{prev: -1}
	s := &snapshot{format: codec.Kafka, tab: kt}
	sc := kafka.NewScanner(r, size, kafka.Options{Strict: o.Strict})
	in, err := kt.scan(ctx, sc, s, progress{fn: o.Progress, total: size})
	if err != nil {
		return nil, err
	}
	kt.facts = in
	s.size = size
	s.damage = sc.Damage()
	s.flavor = kt.flavor()
	return s, nil
}

func (kafkaDriver) decode(d *decoder, f codec.Format, n int64) table {
	t := &kafkaTable{}
	d.kafka(t, n)
	return t
}

// kafkaTable stores a segment's batches and, for each record of a data
// batch, where its value sits in the batch's data and its offset delta:
// 12 bytes a record and one kBatch per batch.
type kafkaTable struct {
	batches []kBatch
	voff    []uint32 // value position in the batch's data
	vlen    []uint32 // value length (a null value: 0)
	delta   []uint32 // Kafka offset minus the batch's base offset
	facts   kafka.Info
	resume  int64 // end of the last intact batch: where a grown segment is scanned from
	prev    int64 // the last offset before resume (-1: none)

	owner    atomic.Uint64 // key space in the decoded-data cache (0 until first used)
	mu       sync.Mutex
	inflight map[int]*batchLoad // batches being read, so that concurrent readers share one read
	verified sync.Map           // int → true: large uncompressed batches whose checksum a read verified
}

// kBatch is one batch of a kafkaTable.
type kBatch struct {
	off   int64  // file offset
	n     int64  // bytes in the file
	first int64  // number of its first record in the table
	base  int64  // Kafka offset that the records' deltas count from
	last  int64  // Kafka offset of its last record
	dlen  uint32 // length of its data (decompressed records, or the uncompressed batch from its data offset)
	flags uint8  // magic | codec<<2 | control<<5 | compressed-data-offset<<6
}

const (
	kMagicMask   = 0x03
	kCodecShift  = 2
	kCodecMask   = 0x07
	kControlFlag = 0x20
)

func (b kBatch) magic() int8 { return int8(b.flags & kMagicMask) }
func (b kBatch) codec() kafka.Compression {
	return kafka.Compression(b.flags >> kCodecShift & kCodecMask)
}
func (b kBatch) control() bool    { return b.flags&kControlFlag != 0 }
func (b kBatch) compressed() bool { return b.codec() != kafka.None }
func (b kBatch) dataOff() int64   { return kafka.Batch{Off: b.off, Magic: b.magic()}.DataOff() }
func batchFlags(b kafka.Batch) uint8 {
	f := uint8(b.Magic)&kMagicMask | uint8(b.Compression())<<kCodecShift
	if b.Control() {
		f |= kControlFlag
	}
	return f
}

// scan adds the records sc yields to t and s, keeping control batches
// without their records, and returns the scan's facts.
func (t *kafkaTable) scan(ctx context.Context, sc *kafka.Scanner, s *snapshot, prog progress) (in kafka.Info, err error) {
	defer recoverFault(guardFault(), &err)
	var done atomic.Int64
	pp := partProgress{ctx: ctx, done: &done, prog: prog, last: sc.Info().LastEnd}
	at := int64(-1)
	for sc.Next() {
		b, rec := sc.Batch(), sc.Record()
		if b.Off != at {
			at = b.Off
			t.batches = append(t.batches, kBatch{off: b.Off, n: b.Len, first: s.n, base: b.BaseOffset, last: b.LastOffset,
				flags: batchFlags(b)})
			if !pp.step(b.Off) {
				break
			}
		}
		kb := &t.batches[len(t.batches)-1]
		end := rec.Pos + rec.Len
		if !b.Compressed() && b.Magic == 2 {
			end = b.End() - b.DataOff()
		}
		kb.dlen = uint32(max(int64(kb.dlen), end))
		if b.Control() {
			continue
		}
		t.voff = append(t.voff, uint32(rec.ValueOff))
		t.vlen = append(t.vlen, uint32(max(rec.ValueLen, 0)))
		t.delta = append(t.delta, uint32(rec.Offset-b.BaseOffset))
		s.n++
		s.bytes += max(rec.ValueLen, 0)
	}
	pp.finish(sc.Info().Next)
	if err := sc.Err(); err != nil {
		return in, err
	}
	if err := canceled(ctx); err != nil {
		return in, err
	}
	in = sc.Info()
	t.resume = in.LastEnd
	if in.LastOffset >= 0 {
		t.prev = in.LastOffset
	}
	prog.report(in.Next)
	return in, nil
}

// mergeFacts adds the facts of a scan of a grown segment's new tail to
// those of the scan before it.
func mergeFacts(old, in kafka.Info) kafka.Info {
	m := in
	m.Batches += old.Batches
	m.Records += old.Records
	m.ControlBatches += old.ControlBatches
	m.ControlRecords += old.ControlRecords
	m.Commits += old.Commits
	m.Aborts += old.Aborts
	m.TransactionalBatches += old.TransactionalBatches
	for i := range m.Magic {
		m.Magic[i] += old.Magic[i]
	}
	for i := range m.Codecs {
		m.Codecs[i] += old.Codecs[i]
	}
	if old.FirstOffset >= 0 {
		m.FirstOffset = old.FirstOffset
	}
	if old.Records > 0 {
		m.FirstTimestamp = old.FirstTimestamp
	}
	if in.LastOffset < 0 {
		m.LastOffset = old.LastOffset
	}
	if in.Records == 0 {
		m.LastTimestamp = old.LastTimestamp
	}
	m.MaxTimestamp = max(old.MaxTimestamp, in.MaxTimestamp)
	m.Producers = append([]int64(nil), old.Producers...)
	m.MoreProducers = old.MoreProducers || in.MoreProducers
	for _, p := range in.Producers {
		if len(m.Producers) >= kafka.MaxProducers {
			m.MoreProducers = true
			break
		}
		if !containsID(m.Producers, p) {
			m.Producers = append(m.Producers, p)
		}
	}
	return m
}

func containsID(ids []int64, id int64) bool {
	for _, v := range ids {
		if v == id {
			return true
		}
	}
	return false
}

// flavor names the segment's message formats and codecs for people.
func (t *kafkaTable) flavor() string {
	f := &t.facts
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

// batchOf returns the index of the batch holding record k.
func (t *kafkaTable) batchOf(k int64) int {
	return sort.Search(len(t.batches), func(i int) bool { return t.batches[i].first > k }) - 1
}

func (t *kafkaTable) size(k int64) int64 { return int64(t.vlen[k]) }

func (t *kafkaTable) offset(k int64) int64 { return t.batches[t.batchOf(k)].off }

// kafkaMaxCached returns the largest batch data the cache keeps (a
// variable for tests).
var kafkaMaxCached = func() int64 { return recordio.DefaultBlockCache().MaxEntry() }

// kafkaBatchReads counts the batches read (verified and decompressed) from
// a source, for tests.
var kafkaBatchReads atomic.Int64

// readAt reads record k's value: from its batch's data, which is read,
// verified and decompressed once and then kept in the process's
// decoded-data cache (recordio.DefaultBlockCache, one budget for every
// format) while reads of its records follow; an uncompressed batch larger
// than the cache keeps is verified once and read in place.
func (t *kafkaTable) readAt(tb *Table, s *snapshot, k int64, p []byte, off int64) (int, error) {
	bi := t.batchOf(k)
	b := t.batches[bi]
	vo, vl := int64(t.voff[k]), int64(t.vlen[k])
	want, ok, err := codec.ClipRead(p, off, vl)
	if !ok {
		return 0, err
	}
	src := tb.src(s)
	cache := recordio.DefaultBlockCache()
	if !b.compressed() && int64(b.dlen) > kafkaMaxCached() {
		if _, ok := t.verified.Load(bi); !ok {
			if err := kafka.VerifyBatch(src, b.off, b.n); err != nil {
				return 0, err
			}
			t.verified.Store(bi, true)
		}
		n, err := src.ReadAt(want, b.dataOff()+vo+off)
		if n == len(want) {
			return n, nil
		}
		if err == nil || err == io.EOF {
			err = fmt.Errorf("%w: batch at %d ends early", codec.ErrTruncated, b.off)
		}
		return n, err
	}
	data, err := t.batchData(src, bi, cache)
	if err != nil {
		return 0, err
	}
	return copy(want, data[vo+off:]), nil
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
	if !ok || n > int64(len(o.voff)) || n > int64(len(t.voff)) {
		return false
	}
	for i := range n {
		if o.voff[i] != t.voff[i] || o.vlen[i] != t.vlen[i] || o.delta[i] != t.delta[i] ||
			o.batches[o.batchOf(i)] != t.batches[t.batchOf(i)] {
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
	kt := &kafkaTable{batches: ot.batches, voff: ot.voff, vlen: ot.vlen, delta: ot.delta, facts: ot.facts,
		resume: ot.resume, prev: ot.prev}
	s.tab = kt
	in, err := kt.scan(ctx, sc, &s, progress{})
	if err != nil {
		return nil, err
	}
	kt.facts = mergeFacts(ot.facts, in)
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
		e.i64(b.off)
		e.i64(b.n)
		e.i64(b.first)
		e.i64(b.base)
		e.i64(b.last)
		e.u32(b.dlen)
		e.u8(b.flags)
	}
	e.u32s(t.voff)
	e.u32s(t.vlen)
	e.u32s(t.delta)
	f := &t.facts
	for _, v := range []int64{f.Next, f.LastEnd, f.Batches, f.Records, f.ControlBatches, f.ControlRecords, f.Commits, f.Aborts,
		f.TransactionalBatches, f.FirstOffset, f.LastOffset, f.FirstTimestamp, f.LastTimestamp, f.MaxTimestamp} {
		e.i64(v)
	}
	for _, v := range f.Magic {
		e.i64(v)
	}
	for _, v := range f.Codecs {
		e.i64(v)
	}
	e.bool(f.MoreProducers)
	e.u32(uint32(len(f.Producers)))
	for _, p := range f.Producers {
		e.i64(p)
	}
}

// kBatchSize is the encoded size of one kBatch.
const kBatchSize = 5*8 + 4 + 1

func (d *decoder) kafka(t *kafkaTable, n int64) {
	t.resume, t.prev = d.i64(), d.i64()
	nb := d.count(kBatchSize)
	if d.err != nil {
		return
	}
	t.batches = make([]kBatch, nb)
	for i := range t.batches {
		t.batches[i] = kBatch{off: d.i64(), n: d.i64(), first: d.i64(), base: d.i64(), last: d.i64(), dlen: d.u32(), flags: d.u8()}
	}
	if d.err != nil || uint64(n)*12 > uint64(d.remaining()) {
		d.err = errBadCache
		return
	}
	t.voff, t.vlen, t.delta = d.u32s(n), d.u32s(n), d.u32s(n)
	f := &t.facts
	for _, p := range []*int64{&f.Next, &f.LastEnd, &f.Batches, &f.Records, &f.ControlBatches, &f.ControlRecords, &f.Commits,
		&f.Aborts, &f.TransactionalBatches, &f.FirstOffset, &f.LastOffset, &f.FirstTimestamp, &f.LastTimestamp, &f.MaxTimestamp} {
		*p = d.i64()
	}
	for i := range f.Magic {
		f.Magic[i] = d.i64()
	}
	for i := range f.Codecs {
		f.Codecs[i] = d.i64()
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
	if int64(len(t.voff)) != s.n || int64(len(t.vlen)) != s.n || int64(len(t.delta)) != s.n {
		return fmt.Errorf("%d records, %d/%d/%d entries", s.n, len(t.voff), len(t.vlen), len(t.delta))
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
		switch {
		case b.off < end || b.n <= 0 || b.off+b.n > s.size || b.off+b.n < b.off:
			return fmt.Errorf("batch %d at %d, %d bytes (previous ends at %d, file %d)", i, b.off, b.n, end, s.size)
		case b.first != first || next < first || (b.control() && next != first):
			return fmt.Errorf("batch %d: records from %d, want %d", i, b.first, first)
		case b.base < 0 || b.last < b.base || b.magic() > 2 || b.codec() > kafka.Zstd:
			return fmt.Errorf("batch %d: offsets %d..%d, flags %#x", i, b.base, b.last, b.flags)
		}
		prevDelta := int64(-1)
		for k := first; k < next; k++ {
			if int64(t.voff[k])+int64(t.vlen[k]) > int64(b.dlen) || int64(t.delta[k]) <= prevDelta ||
				b.base+int64(t.delta[k]) > b.last {
				return fmt.Errorf("record %d outside batch %d", k, i)
			}
			prevDelta = int64(t.delta[k])
			total += int64(t.vlen[k])
		}
		end, first = b.off+b.n, next
	}
	if first != s.n {
		return fmt.Errorf("batches hold %d records, table %d", first, s.n)
	}
	if total != s.bytes {
		return fmt.Errorf("%d payload bytes, table says %d", total, s.bytes)
	}
	return nil
}

// The capabilities of Kafka segments: read-only, extended when grown.
var (
	_ readOnly = kafkaDriver{}
	_ extender = (*kafkaTable)(nil)
)
