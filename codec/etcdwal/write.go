package etcdwal

import (
	"encoding/binary"
	"io"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/recfs/recfs/codec"
)

// WriterOptions configure a Writer.
type WriterOptions struct {
	// Seed is the chain's value the writer continues: the crc of the
	// last record of the previous file (0 for a WAL's first file).
	Seed uint32
	// Offset is where in its file the writer starts.
	Offset int64
}

// A Writer frames records the way etcd's encoder does: each a
// walpb.Record in its exact encoding, its crc chained from the previous
// record's, padded to 8 bytes. A file starts with a crc record
// (WriteRecord(CrcType, nil)). It is not safe for concurrent use.
type Writer struct {
	sink codec.Sink
	crc  uint32
	off  int64
}

// NewWriter returns a Writer appending to w.
func NewWriter(w io.Writer, o WriterOptions) *Writer {
	return &Writer{sink: codec.NewSink(w), crc: o.Seed, off: o.Offset}
}

// WriteRecord writes a record of type typ carrying data (nil for a crc
// record, which carries the chain's value) and returns its offset.
func (w *Writer) WriteRecord(typ int64, data []byte) (int64, error) {
	if err := w.sink.Usable(); err != nil {
		return 0, err
	}
	if typ != CrcType {
		w.crc = chain(w.crc, data)
	}
	b := AppendRecord(nil, WALRecord{Type: typ, CRC: w.crc, Data: data})
	lf, pad := lengthField(len(b))
	start := w.off
	w.sink.Buf = binary.LittleEndian.AppendUint64(w.sink.Buf, lf)
	w.sink.Buf = append(append(w.sink.Buf, b...), make([]byte, pad)...)
	w.off += frameHeader + int64(len(b)+pad)
	return start, w.sink.FlushIfFull()
}

// AppendRecord appends rec in etcd's exact encoding: type, crc, then data
// when it is not nil.
func AppendRecord(b []byte, rec WALRecord) []byte {
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(rec.Type))
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(rec.CRC))
	if rec.Data != nil {
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendBytes(b, rec.Data)
	}
	return b
}

// CRC returns the chain's value after the last record written.
func (w *Writer) CRC() uint32 { return w.crc }

// Offset returns the file offset of the next record.
func (w *Writer) Offset() int64 { return w.off }

// Flush writes what is buffered through to the destination.
func (w *Writer) Flush() error { return w.sink.Flush() }

// Close flushes and closes the writer (not the destination).
func (w *Writer) Close() error { return w.sink.Close() }
