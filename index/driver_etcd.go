package index

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/etcdwal"
)

// etcdDriver is the driver of etcd WAL files (codec/etcdwal): read-only.
// etcd writes into preallocated space rather than growing its files, so a
// changed file is rebuilt, never extended.
type etcdDriver struct{}

func (etcdDriver) probe(r io.ReaderAt, size int64, head []byte) (bool, error) {
	return etcdwal.Probe(r, size), nil
}

func (etcdDriver) tried(head []byte) string {
	return "etcd WAL (no crc record chained to the next at the start)"
}

func (etcdDriver) readOnly() string {
	return "etcd WAL files are written by the etcd member that owns them (their records are raft log entries in a CRC chain)"
}

func (etcdDriver) build(ctx context.Context, r io.ReaderAt, size int64, f codec.Format, o Options) (*snapshot, error) {
	et := &etcdTable{wid: newWholeID()}
	s := &snapshot{format: codec.EtcdWAL, tab: et, size: size}
	sc := etcdwal.NewScanner(r, size, etcdwal.Options{Strict: o.Strict})
	pp := partProgress{ctx: ctx, done: new(atomic.Int64), prog: progress{fn: o.Progress, total: size}}
	for sc.Next() {
		rec := sc.Record()
		et.off = append(et.off, rec.Off)
		et.ln = append(et.ln, uint32(rec.Len))
		et.seed = append(et.seed, rec.Seed)
		et.kind = append(et.kind, uint8(rec.Type)|rec.Pad<<4)
		s.n++
		s.bytes += rec.Len
		if !pp.step(rec.Off) {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := canceled(ctx); err != nil {
		return nil, err
	}
	s.damage = sc.Damage()
	et.info = sc.Info()
	s.flavor = etcdFlavor(et.info, size)
	progress{fn: o.Progress, total: size}.report(size)
	return s, nil
}

// etcdFlavor names a WAL file for people.
func etcdFlavor(in etcdwal.Info, size int64) string {
	if in.ZeroTail < size {
		return fmt.Sprintf("etcd WAL (%d entries; log ends at %d, preallocated zeros after)", in.Entries, in.LastEnd)
	}
	return fmt.Sprintf("etcd WAL (%d entries)", in.Entries)
}

func (etcdDriver) decode(d *decoder, f codec.Format, n int64) table {
	t := &etcdTable{wid: newWholeID()}
	d.etcd(t, n)
	return t
}

// etcdTable stores WAL record locations: 17 bytes a record.
type etcdTable struct {
	off  []int64
	ln   []uint32 // payload (walpb.Record) bytes; records are at most etcdwal.DefaultMaxRecord
	seed []uint32 // the chain value each record's crc continues
	kind []uint8  // type | padding<<4
	info etcdwal.Info
	wid  uint64 // this table's key in wholeRecords
}

func (t *etcdTable) get(n int64) etcdwal.Record {
	return etcdwal.Record{Off: t.off[n], Len: int64(t.ln[n]), Pad: t.kind[n] >> 4, Type: int64(t.kind[n] & 0xf), Seed: t.seed[n]}
}

func (t *etcdTable) size(n int64) int64   { return int64(t.ln[n]) }
func (t *etcdTable) offset(n int64) int64 { return t.off[n] }

// readAt verifies the whole record (its crc covers all of it) once per
// read burst, through the process's cache of whole records.
func (t *etcdTable) readAt(tb *Table, s *snapshot, n int64, p []byte, off int64) (int, error) {
	rec, src := t.get(n), tb.src(s)
	if off == 0 && int64(len(p)) >= rec.Len {
		return etcdwal.ReadRecord(src, rec, p, off)
	}
	return readWhole(t.wid, n, p, off, func() ([]byte, error) { return etcdwal.Read(src, rec, nil) })
}

// proveFrom scans src from its start (each record's checksum continues
// the one before it) and yields its records.
func (t *etcdTable) proveFrom(src io.ReaderAt, s *snapshot, k int64, o Options) (provingScan, int64, error) {
	sc := etcdwal.NewScanner(src, s.size, etcdwal.Options{Strict: o.Strict})
	return &scanProof[etcdwal.Record]{more: sc.Next, record: sc.Record, fail: sc.Err,
		same:   func(k int64, r etcdwal.Record) bool { return t.get(k) == r },
		offset: func(r etcdwal.Record) int64 { return r.Off }}, 0, nil
}

var _ prover = (*etcdTable)(nil)

func (t *etcdTable) samePrefix(old table, n int64) bool {
	o, ok := old.(*etcdTable)
	if !ok || int64(len(o.off)) < n || int64(len(t.off)) < n {
		return false
	}
	for i := range n {
		if o.get(i) != t.get(i) {
			return false
		}
	}
	return true
}

func (t *etcdTable) encode(e *encoder) { e.etcd(t) }

func (e *encoder) etcd(t *etcdTable) {
	e.i64(t.info.Records)
	e.i64(t.info.Entries)
	e.i64(t.info.LastEnd)
	e.i64(t.info.ZeroTail)
	e.i64s(t.off)
	e.u32s(t.ln)
	e.u32s(t.seed)
	for _, k := range t.kind {
		e.u8(k)
	}
}

func (d *decoder) etcd(t *etcdTable, n int64) {
	t.info = etcdwal.Info{Records: d.i64(), Entries: d.i64(), LastEnd: d.i64(), ZeroTail: d.i64()}
	if d.err != nil || uint64(n)*17 > uint64(d.remaining()) {
		d.err = errBadCache
		return
	}
	t.off, t.ln, t.seed = d.i64s(n), d.u32s(n), d.u32s(n)
	t.kind = make([]uint8, n)
	for i := range t.kind {
		t.kind[i] = d.u8()
	}
}

// check verifies a decoded table: frames in order, 8-byte aligned, inside
// the file, of known types and paddings.
func (t *etcdTable) check(s *snapshot) error {
	if int64(len(t.off)) != s.n || int64(len(t.ln)) != s.n || int64(len(t.seed)) != s.n || int64(len(t.kind)) != s.n {
		return fmt.Errorf("%d records, %d offsets, %d lengths", s.n, len(t.off), len(t.ln))
	}
	var end, total int64
	for i := range s.n {
		rec := t.get(i)
		if rec.Off < end || rec.Off%8 != 0 || rec.End() > s.size || rec.Type < etcdwal.MetadataType ||
			rec.Type > etcdwal.SnapshotType || rec.Pad > 7 || rec.Len > etcdwal.DefaultMaxRecord {
			return fmt.Errorf("record %d at %d, %d bytes, type %d (previous ends at %d, file %d)", i, rec.Off, rec.Len, rec.Type, end, s.size)
		}
		end = rec.End()
		total += rec.Len
	}
	if total != s.bytes {
		return fmt.Errorf("%d payload bytes, table says %d", total, s.bytes)
	}
	return nil
}

// The capabilities of etcd WAL files.
var (
	_ readOnly = etcdDriver{}
	_ prober   = etcdDriver{}
)
